#!/usr/bin/env bash
# The previous release's amd64 package, for the VM test's upgrade and downgrade phase: built once
# from the commit that release was made from, then cached by that commit in $WORKOUTD_VM_CACHE/previous-release.
# Prints the .deb's path. The release is named here, not found: "previous" is what users have installed.
#
# Usage: scripts/previous-release.sh    Environment: WORKOUTD_VM_CACHE (default /var/cache/workoutd-vm)
set -euo pipefail

# workoutd 0.1.0: the first release (the landing that shipped the arm64 package and the web page).
version=0.1.0
commit=dc111841a335cf886a08f08d54a271b9a230d61a

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${WORKOUTD_VM_CACHE:-/var/cache/workoutd-vm}/previous-release/$commit"
deb="$cache/workoutd_${version}_amd64.deb"
if [[ -f "$deb" ]]; then
    echo "$deb"
    exit 0
fi

log() { printf 'previous-release: %s\n' "$*" >&2; }
# A shallow clone (as some CI systems make) lacks the commit: fetch it from where the clone came from.
if ! git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null; then
    log "fetching $commit (workoutd $version) from origin"
    git -C "$repo" fetch --quiet origin "$commit" 2>/dev/null || git -C "$repo" fetch --quiet --unshallow origin 2>/dev/null || true
fi
git -C "$repo" cat-file -e "$commit^{commit}" 2>/dev/null \
    || { log "commit $commit of workoutd $version is not in this clone's history, nor at origin"; exit 2; }
# A worktree of its own, beside the clone (not inside: SwiftPM would see the parent package).
tree="$(mktemp -d "${TMPDIR:-/var/tmp}/workoutd-$version.XXXXXX")"
trap 'git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
git -C "$repo" worktree add --detach "$tree" "$commit" >/dev/null
log "building workoutd $version from $commit (once; about 15 minutes on 2 cores)"
make -C "$tree" deb >&2
mkdir -p "$cache"
cp "$tree/dist/workoutd_${version}_amd64.deb" "$deb.partial"
mv "$deb.partial" "$deb"
echo "$deb"

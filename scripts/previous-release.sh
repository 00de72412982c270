#!/usr/bin/env bash
# The previous release's amd64 package, for the VM test's upgrade and downgrade phase: built once
# from the commit that release was made from, then cached by that commit in $WORKOUTD_VM_CACHE/previous-release.
# Prints the .deb's path. The release is named here, not found: "previous" is what users have installed.
#
# On a cold machine it shares this clone's release scratch path: both releases require the same dependencies, so
# pinned to this clone's resolved versions they are compiled once for both, and the previous release compiles only
# its own modules. This clone's next release build then compiles its own modules again, never the dependencies.
#
# Usage: scripts/previous-release.sh
# Environment: WORKOUTD_VM_CACHE (default /var/cache/workoutd-vm),
#              WORKOUTD_PREVIOUS_RELEASE_SCRATCH (default: this clone's .build-release; "own" for a scratch path of
#              the worktree's own, which compiles every dependency again)
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
scratch="${WORKOUTD_PREVIOUS_RELEASE_SCRATCH:-$repo/.build-release}"
# SwiftPM keeps its build plan in the scratch path and reuses it for another package built there, which would build
# this clone's workoutd instead: the plan is dropped before and after (the compiled modules stay, and each package
# is planned afresh).
replan() { :; }
if [[ "$scratch" == own ]]; then
    scratch="$tree/.build-release"
else
    replan() { rm -f "$scratch"/*.yaml "$scratch"/*/release/description.json; }
    # The same dependency versions as this clone's build, so the shared scratch path keeps its checkouts.
    if [[ -f "$repo/Package.resolved" ]]; then cp "$repo/Package.resolved" "$tree/Package.resolved"; fi
fi
trap 'replan; git -C "$repo" worktree remove --force "$tree" >/dev/null 2>&1 || rm -rf "$tree"' EXIT
replan
log "building workoutd $version from $commit in $scratch (once)"
RELEASE_SCRATCH="$scratch" make -C "$tree" deb >&2
replan
mkdir -p "$cache"
cp "$tree/dist/workoutd_${version}_amd64.deb" "$deb.partial"
mv "$deb.partial" "$deb"
echo "$deb"

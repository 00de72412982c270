#!/usr/bin/env bash
# Runs a command in the arm64 cross-build root (scripts/arm64-toolchain.sh makes or reuses it), in the
# repository's own directory at the same absolute path, so SwiftPM's scratch path (.build-arm64) stays
# incremental between runs. The command writes to the repository and to a private /tmp (HOME is there, so
# SwiftPM's caches go with it); the local package mirrors (git's url.<path>.insteadOf rules, when set) are
# mounted in read-only, so packages resolve as they do outside.
#
# The build directory ROOT.scratch (beside the root, keyed with it) is mounted at its own path too: SwiftPM's
# products of the dependencies stay valid across clones. One arm64 build at a time per root.
#
# Usage: scripts/arm64-run.sh COMMAND [ARGS...]   (as root; a private mount namespace, gone when it ends)
# Environment: WORKOUTD_ARM64_ROOT names an existing root (skips the toolchain script); DEB_*, DH_*,
# SOURCE_DATE_EPOCH and DEB_BUILD_OPTIONS pass through (debian/rules calls dh_strip/dh_shlibdeps through it).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/.." && pwd)"
root="${WORKOUTD_ARM64_ROOT:-$(bash "$here/arm64-toolchain.sh")}"
[[ -f "$root/.complete" ]] || { echo "arm64-run: $root is not a finished root" >&2; exit 2; }
[[ $EUID -eq 0 ]] || { echo "arm64-run: needs root (a mount namespace and chroot)" >&2; exit 2; }
scratch="$root.scratch"
mkdir -p "$scratch"
# Build directories whose root the toolchain script has since pruned (a newer toolchain) go with it.
for old in "$(dirname "$root")"/*.scratch; do
    [[ -d "${old%.scratch}" ]] || rm -rf --one-file-system "$old"
done

# Local mirrors of remote repositories (CI resolves packages offline this way): the rules and their targets.
gitconfig="$(mktemp)"
mirrors=()
while read -r name value; do
    [[ -n "$name" ]] || continue
    git config --file "$gitconfig" --add "$name" "$value"
    base="${name#url.}"; base="${base%.insteadof}"
    [[ "$base" == /* && -d "$base" ]] && mirrors+=("$base")
done < <(git config --get-regexp '^url\..*\.insteadof$' 2>/dev/null || true)
git config --file "$gitconfig" safe.directory '*'

envfile="$(mktemp)"
trap 'rm -f "$gitconfig" "$envfile"' EXIT
printf '%s\0' HOME=/tmp/home PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 \
    GIT_CONFIG_GLOBAL=/tmp/gitconfig > "$envfile"
while IFS='=' read -r name _; do
    case "$name" in DEB_*|DH_*|SOURCE_DATE_EPOCH|DEB_BUILD_OPTIONS) printf '%s\0' "$name=${!name}" >> "$envfile" ;; esac
done < <(env)

unshare --mount --fork -- bash -c '
set -e
root=$1 repo=$2 gitconfig=$3 envfile=$4 scratch=$5 nmirrors=$6; shift 6
mirrors=("${@:1:nmirrors}"); shift "$nmirrors"
mapfile -d "" envs < "$envfile"
mount --make-rprivate /
mount -t proc proc "$root/proc"
mount --rbind /dev "$root/dev"
mount -t tmpfs tmpfs "$root/tmp"
mkdir -p "$root/tmp/home"
cp "$gitconfig" "$root/tmp/gitconfig"
for m in "${mirrors[@]}"; do mkdir -p "$root$m"; mount --bind -o ro "$m" "$root$m"; done
mkdir -p "$root$repo"
mount --bind "$repo" "$root$repo"
mkdir -p "$root$scratch"
mount --bind "$scratch" "$root$scratch"
cwd=$PWD
[[ "$cwd" == "$repo" || "$cwd" == "$repo"/* ]] || cwd=$repo
exec chroot "$root" env -i "${envs[@]}" bash -c "cd \"\$0\" && exec \"\$@\"" "$cwd" "$@"
' arm64-run "$root" "$repo" "$gitconfig" "$envfile" "$scratch" "${#mirrors[@]}" "${mirrors[@]}" "$@"

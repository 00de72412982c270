#!/usr/bin/env bash
# Builds (once) and reuses the root that cross-compiles workoutd for arm64 (make deb ARCH=arm64).
#
# The Swift toolchain at /opt/swift carries x86_64 runtime libraries only, and trixie's own swiftlang (6.0) is
# too old for swift-configuration (tools 6.2). Debian sid has swiftlang 6.2 for amd64 and arm64, so the root is:
#   - a Debian sid amd64 root (mmdebstrap) with swiftlang, lld, libc6-dev and g++ for the host side (SwiftPM
#     compiles Package.swift and plug-ins for the build machine), qemu-user (runs the arm64 binary for help2man),
#     and, for dpkg-shlibdeps and dh_strip, the arm64 runtime libraries and binutils-aarch64-linux-gnu;
#   - in it, a Swift SDK bundle (SE-0387) at /opt/workoutd-arm64.artifactbundle, target aarch64-unknown-linux-gnu:
#     its sysroot is Debian trixie arm64 (what the package runs on, so the binary needs no newer glibc than
#     trixie's) with the headers and libraries workoutd links, plus the arm64 Swift runtime and static libraries
#     from sid's arm64 swiftlang/libswiftlang packages (usr/lib/swift, usr/lib/swift_static), same version as the
#     compiler. The toolset links with lld (gold, the toolchain's default, is gone from sid's binutils).
# The root is keyed on this script (package lists, every step) and the versions it was made from (swiftlang in
# sid, libc6 in trixie): a new upload in either builds a new root. Without a reachable mirror, the newest root
# made by this same script is reused.
#
# Usage: scripts/arm64-toolchain.sh [CACHE]   (default: $WORKOUTD_ARM64_CACHE or /var/cache/workoutd-arm64)
# Prints the root's directory on stdout; progress goes to stderr. Needs root, mmdebstrap, network once.
# Environment: WORKOUTD_DEBIAN_MIRROR overrides the mirror taken from apt's configured sources.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${1:-${WORKOUTD_ARM64_CACHE:-/var/cache/workoutd-arm64}}"
# Host side. swiftlang needs gcc's libc6-dev and libstdc++ headers for the manifest and C targets (apt-only
# variant: no Recommends). qemu-user: help2man runs the arm64 binary. The :arm64 libraries are what the binary
# links dynamically (dpkg-shlibdeps finds their packages and symbol versions here).
host_packages=(swiftlang lld git ca-certificates libc6-dev g++ pkgconf qemu-user binutils-aarch64-linux-gnu
               dpkg-dev debhelper
               libc6:arm64 libgcc-s1:arm64 libstdc++6:arm64 libudev1:arm64 libsystemd0:arm64 libsqlite3-0:arm64
               zlib1g:arm64)
# Target side, trixie arm64: what the Swift runtime and workoutd's C modules need to link.
sysroot_packages=(libc6-dev libgcc-14-dev libstdc++-14-dev linux-libc-dev libudev-dev libsystemd-dev
                  libsqlite3-dev zlib1g-dev)
sdk_id=trixie-arm64
bundle=/opt/workoutd-arm64.artifactbundle

log() { printf 'arm64-toolchain: %s\n' "$*" >&2; }
[[ $EUID -eq 0 ]] || { log "building the root needs root"; exit 2; }
command -v mmdebstrap >/dev/null || { log "mmdebstrap is missing: apt-get install -y mmdebstrap"; exit 2; }
source "$here/debian-mirror.sh"
mirror=$(debian_mirror)
mkdir -p "$cache"
script_key="$(cat "${BASH_SOURCE[0]}" "$here/debian-mirror.sh" | sha256sum | cut -c1-12)"

# The mirror may be a frozen snapshot whose Release files have expired.
aptopts=(-o Acquire::Check-Valid-Until=false -o Acquire::Languages=none)

# version SUITE ARCH PACKAGE: the candidate version in that suite, from a throwaway apt state.
versions() {
    local state
    state="$(mktemp -d "$cache/apt.XXXXXX")"
    mkdir -p "$state/lists/partial" "$state/etc/preferences.d" "$state/etc/sources.list.d"
    : > "$state/status"
    printf 'deb [arch=amd64,arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s sid main\n' \
        "$mirror" > "$state/sid.list"
    printf 'deb [arch=arm64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] %s trixie main\n' \
        "$mirror" > "$state/trixie.list"
    local opts=("${aptopts[@]}" -o Dir::State::Lists="$state/lists" -o Dir::State::status="$state/status"
                -o Dir::Etc::SourceList=/dev/null -o Dir::Etc::SourceParts="$state/etc/sources.list.d"
                -o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts="$state/etc/preferences.d"
                -o Dir::Cache="$state" -o APT::Architecture=amd64 -o APT::Architectures::=arm64)
    local ok=0
    if apt-get "${opts[@]}" -o Dir::Etc::SourceList="$state/sid.list" update -qq >/dev/null 2>&1; then
        printf 'swiftlang %s\n' "$(apt-cache "${opts[@]}" -o Dir::Etc::SourceList="$state/sid.list" \
            show --no-all-versions swiftlang:amd64 2>/dev/null | sed -n 's/^Version: //p')"
        if apt-get "${opts[@]}" -o Dir::Etc::SourceList="$state/trixie.list" update -qq >/dev/null 2>&1; then
            printf 'trixie-libc6 %s\n' "$(apt-cache "${opts[@]}" -o Dir::Etc::SourceList="$state/trixie.list" \
                show --no-all-versions libc6:arm64 2>/dev/null | sed -n 's/^Version: //p')"
            ok=1
        fi
    fi
    rm -rf "$state"
    ((ok))
}

if versions_text="$(versions)" && ! grep -q ' $' <<<"$versions_text"; then
    key="$script_key-$(sha256sum <<<"$versions_text" | cut -c1-8)"
else
    newest="$(ls -td "$cache/$script_key"-*/.complete 2>/dev/null | head -n 1 || true)"
    [[ -n "$newest" ]] || { log "cannot read the package versions from $mirror and nothing is cached"; exit 1; }
    log "mirror unreachable: reusing $(dirname "$newest")"
    printf '%s\n' "$(dirname "$newest")"
    exit 0
fi
dir="$cache/$key"
if [[ -f "$dir/.complete" ]]; then
    log "reusing $dir"
    printf '%s\n' "$dir"
    exit 0
fi
swift_version="$(sed -n 's/^swiftlang //p' <<<"$versions_text")"
log "making $dir from $mirror: $(tr '\n' ' ' <<<"$versions_text")"
rm -rf --one-file-system "$dir"
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf --one-file-system "$work"' EXIT
root="$work/root"
started=$SECONDS

# The SDK bundle: the target's sysroot (trixie arm64, packages only unpacked: nothing of it runs here) and the
# arm64 Swift runtime of the same swiftlang version as the compiler, then the two JSON files SwiftPM reads.
# /lib is a symlink in a merged-/usr system; libc.so's linker script names /lib/... paths inside the sysroot.
customize_hook='set -e
bundle="$1'"$bundle"'"
sdk="$bundle/'"$sdk_id"'"
mkdir -p "$sdk"
mmdebstrap --quiet --variant=extract --architectures=arm64 --aptopt="Acquire::Check-Valid-Until \"false\"" \
    --include='"$(IFS=,; echo "${sysroot_packages[*]}")"' trixie "$sdk/sysroot" '"$mirror"'
ln -sfn usr/lib "$sdk/sysroot/lib"
rm -rf "$sdk/sysroot/var/cache/apt" "$sdk/sysroot/var/lib/apt/lists"
debs="$(mktemp -d)"
(cd "$debs" && chroot "$1" sh -c "cd /tmp && apt-get -o Acquire::Check-Valid-Until=false download swiftlang:arm64='"$swift_version"' libswiftlang:arm64='"$swift_version"' >/dev/null && mv /tmp/*.deb /var/cache/apt/archives/")
mkdir -p "$debs/x"
for deb in "$1"/var/cache/apt/archives/*swiftlang_*_arm64.deb; do
    dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$debs/x" --wildcards "./usr/libexec/swift/lib/*"
    rm -f "$deb"
done
lib="$debs/x/usr/libexec/swift/lib"
mkdir -p "$sdk/sysroot/usr/lib/swift"
# The compiler plug-ins (host), embedded Swift and the migrator are for the build machine or other targets.
for entry in "$lib"/swift/*; do
    case "${entry##*/}" in host|embedded|migrator|pm|FrameworkABIBaseline|_InternalSwiftScan|_InternalSwiftStaticMirror) ;;
        *) cp -a "$entry" "$sdk/sysroot/usr/lib/swift/" ;; esac
done
cp -a "$lib/swift_static" "$sdk/sysroot/usr/lib/"
rm -rf "$sdk/sysroot/usr/lib/swift_static/embedded"
cp -a "$lib/clang" "$sdk/sysroot/usr/lib/"
rm -rf "$debs"
cat > "$bundle/info.json" <<EOF
{
  "schemaVersion": "1.0",
  "artifacts": {
    "'"$sdk_id"'": {
      "type": "swiftSDK",
      "version": "'"$swift_version"'",
      "variants": [{ "path": "'"$sdk_id"'", "supportedTriples": ["x86_64-pc-linux-gnu", "x86_64-unknown-linux-gnu"] }]
    }
  }
}
EOF
cat > "$sdk/swift-sdk.json" <<EOF
{
  "schemaVersion": "4.0",
  "targetTriples": {
    "aarch64-unknown-linux-gnu": {
      "sdkRootPath": "sysroot",
      "swiftResourcesPath": "sysroot/usr/lib/swift",
      "swiftStaticResourcesPath": "sysroot/usr/lib/swift_static",
      "toolsetPaths": ["toolset.json"]
    }
  }
}
EOF
cat > "$sdk/toolset.json" <<EOF
{
  "schemaVersion": "1.0",
  "swiftCompiler": { "extraCLIOptions": ["-use-ld=lld"] }
}
EOF
rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages'

# No --aptopt for languages etc.: the root keeps working apt lists only long enough for the hook's download.
nice -n 15 mmdebstrap --variant=apt --mode=root --architectures=amd64,arm64 \
    --aptopt='Acquire::Check-Valid-Until "false"' \
    --include="$(IFS=,; echo "${host_packages[*]/#swiftlang/swiftlang=$swift_version}")" \
    --customize-hook="$customize_hook" \
    sid "$root" "$mirror" >&2
log "root made in $((SECONDS - started)) s ($(du -sh "$root" | cut -f1))"
mv "$root" "$dir"
printf '%s\n' "$versions_text" > "$dir/.versions"
touch "$dir/.complete"
# Older roots of this cache: only the newest few are kept (each takes gigabytes).
ls -td "$cache"/*/.complete 2>/dev/null | tail -n +3 | while read -r old; do
    log "removing old root $(dirname "$old")"
    rm -rf --one-file-system "$(dirname "$old")"
done
printf '%s\n' "$dir"

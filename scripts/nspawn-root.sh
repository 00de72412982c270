#!/usr/bin/env bash
# Creates (once) and reuses a minimal Debian bookworm root that boots systemd under systemd-nspawn.
# The root lives outside the repository so every run and every checkout shares it.
#
# Usage: scripts/nspawn-root.sh [ROOT]      (default: $WORKOUTD_NSPAWN_ROOT or /var/tmp/workoutd-nspawn-root)
# Prints the root's path on stdout; progress goes to stderr.
# Environment: WORKOUTD_DEBIAN_MIRROR overrides the mirror taken from apt's configured sources.
set -euo pipefail

root="${1:-${WORKOUTD_NSPAWN_ROOT:-/var/tmp/workoutd-nspawn-root}}"
suite=bookworm
# Beyond minbase: what workoutd links dynamically besides glibc (libsystemd0, libudev1 and libstdc++6
# come with systemd and apt), and procps for the unit's ExecReload=/bin/kill, as on any standard install.
runtime_packages=(libsqlite3-0 procps)
# Written last, so an interrupted debootstrap is never mistaken for a usable root.
stamp="$root/.workoutd-root-complete"

log() { printf 'nspawn-root: %s\n' "$*" >&2; }

# A root cached by an older version of this script may lack a runtime package added since.
ensure_runtime_packages() {
    local missing=() package
    for package in "${runtime_packages[@]}"; do
        chroot "$root" dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q 'ok installed' \
            || missing+=("$package")
    done
    ((${#missing[@]} == 0)) && return 0
    log "installing into the root: ${missing[*]}"
    if ! chroot "$root" apt-get install -y --no-install-recommends "${missing[@]}" >&2; then
        log "could not install ${missing[*]} into $root"
        exit 1
    fi
}

if [[ -f "$stamp" ]]; then
    log "reusing $root"
    ensure_runtime_packages
    printf '%s\n' "$root"
    exit 0
fi

for tool in debootstrap systemd-nspawn; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        log "$tool is missing: apt-get install -y debootstrap systemd-container"
        exit 2
    fi
done
if [[ $EUID -ne 0 ]]; then
    log "debootstrap needs root"
    exit 2
fi

source "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
mirror=$(debian_mirror)

if [[ -e "$root" ]]; then
    log "removing incomplete root $root (no completion stamp)"
    rm -rf --one-file-system "$root"
fi

log "debootstrap $suite into $root from $mirror"
started=$SECONDS
if ! debootstrap --variant=minbase --include="systemd,systemd-sysv,dbus,$(IFS=,; echo "${runtime_packages[*]}")" "$suite" "$root" "$mirror" >&2; then
    log "debootstrap failed (see above; $root/debootstrap/debootstrap.log if it exists); the root is unusable"
    exit 1
fi

# No getty or networking needed inside: the tests drive it through nsenter, and a passive console
# avoids agetty fighting over the caller's terminal.
chroot "$root" systemctl mask --quiet console-getty.service getty@tty1.service \
    systemd-networkd-wait-online.service >&2 || true
# A root password is irrelevant (no login), but an empty machine-id makes systemd generate one per boot.
: >"$root/etc/machine-id"

touch "$stamp"
log "root ready in $((SECONDS - started)) s"
printf '%s\n' "$root"

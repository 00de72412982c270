#!/usr/bin/env bash
# Builds (once) and reuses the Debian VM image for the real plug-in test (make test-vm): bookworm amd64, or
# with WORKOUTD_VM_ARCH=arm64 trixie arm64 (what the Raspberry-Pi-class hubs run; made on this amd64 machine
# with the arm64 build root's qemu-user, scripts/foreign-arch.py).
# The image is keyed on this script's hash (the package list and every customisation live here), so
# changing either builds a new one; a run never writes to it (the test boots a qcow2 overlay on top).
#
# Usage: scripts/vm-image.sh [CACHE]   (default: $WORKOUTD_VM_CACHE or /var/cache/workoutd-vm)
# Prints the image directory (disk.img, vmlinuz, initrd.img) on stdout; progress goes to stderr.
# Environment: WORKOUTD_DEBIAN_MIRROR overrides the mirror taken from apt's configured sources.
set -euo pipefail

cache="${1:-${WORKOUTD_VM_CACHE:-/var/cache/workoutd-vm}}"
arch="${WORKOUTD_VM_ARCH:-amd64}"
case "$arch" in
    amd64) suite=bookworm console=ttyS0 ;;
    arm64) suite=trixie console=ttyAMA0 ;;  # the PL011 UART of QEMU's virt machine
    *) printf 'vm-image: no image for %s (amd64, arm64)\n' "$arch" >&2; exit 2 ;;
esac
# The kernel, real systemd and udev, what workoutd links dynamically (the package's Depends must be met
# offline: the guest has no network), python3 for the guest-side wearable driver, dbus for systemctl.
packages=(systemd systemd-sysv udev dbus kmod "linux-image-$arch" initramfs-tools
          libsqlite3-0 libudev1 libsystemd0 libstdc++6 libgcc-s1 zlib1g procps python3
          e2fsprogs)
# The image is keyed on what builds it: this script and the mirror helper it sources.
key="$({ cat "${BASH_SOURCE[0]}" "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"; echo "$arch"; } | sha256sum | cut -c1-16)"
dir="$cache/$key"
stamp="$dir/.complete"

log() { printf 'vm-image: %s\n' "$*" >&2; }

if [[ -f "$stamp" ]]; then
    log "reusing $dir"
    printf '%s\n' "$dir"
    exit 0
fi
for tool in mmdebstrap mke2fs; do
    command -v "$tool" >/dev/null 2>&1 || { log "$tool is missing: apt-get install -y mmdebstrap e2fsprogs"; exit 2; }
done
[[ $EUID -eq 0 ]] || { log "building the image needs root"; exit 2; }

source "$(dirname "${BASH_SOURCE[0]}")/debian-mirror.sh"
mirror=$(debian_mirror)

rm -rf --one-file-system "$dir"
mkdir -p "$dir"
work="$(mktemp -d "$cache/build.XXXXXX")"
trap 'rm -rf --one-file-system "$work"' EXIT
root="$work/root"
started=$SECONDS
log "mmdebstrap $suite from $mirror"

# Debian's initramfs holds every storage driver (tens of MB); the guest needs virtio and ext4 only, and a small
# initramfs boots noticeably faster under TCG. conf.d is a directory, not a conffile, so writing it before
# initramfs-tools is unpacked does not trip dpkg; the module list (a conffile) is written afterwards and the
# initramfs made again.
essential_hook='mkdir -p "$1/etc/initramfs-tools/conf.d"
printf "MODULES=list\nCOMPRESS=gzip\n" > "$1/etc/initramfs-tools/conf.d/vmtest.conf"'

# The test's entry points: vmtest-early.service mounts the payload disk (/dev/vdb: the deb and the guest
# scripts of this run) before workoutd could start, and runs its early step (plugging a wearable before the
# daemon starts, when the run asks for it); vmtest.service runs the test proper. Both are generic: what they
# run comes from the payload, so changing the test does not rebuild the image.
customize_hook='set -e
printf "virtio_pci\nvirtio_blk\nvirtio_console\next4\n" >> "$1/etc/initramfs-tools/modules"
chroot "$1" update-initramfs -u -k all
printf "/dev/vda / ext4 rw,relatime 0 1\n" > "$1/etc/fstab"
echo workoutd-vm > "$1/etc/hostname"
: > "$1/etc/machine-id"
cat > "$1/etc/systemd/system/vmtest-early.service" <<EOF
[Unit]
Description=workoutd VM test: payload and early plug
DefaultDependencies=no
After=local-fs.target systemd-udevd.service systemd-modules-load.service
Before=workoutd.service sysinit.target
ConditionPathExists=/dev/vdb
[Service]
Type=oneshot
RemainAfterExit=yes
ExecStart=/bin/sh -c "mkdir -p /run/vmtest && mount -o ro /dev/vdb /run/vmtest && exec /run/vmtest/guest-early"
StandardOutput=journal+console
[Install]
WantedBy=sysinit.target
EOF
cat > "$1/etc/systemd/system/vmtest.service" <<EOF
[Unit]
Description=workoutd VM test
After=vmtest-early.service basic.target
Requires=vmtest-early.service
[Service]
Type=exec
ExecStart=/run/vmtest/guest-run
StandardOutput=journal+console
TimeoutStartSec=infinity
[Install]
WantedBy=multi-user.target
EOF
chroot "$1" systemctl enable vmtest-early.service vmtest.service
chroot "$1" systemctl mask serial-getty@'"$console"'.service getty@tty1.service apt-daily.timer \
    apt-daily-upgrade.timer e2scrub_all.timer e2scrub_reap.service fstrim.timer systemd-timesyncd.service \
    man-db.timer dpkg-db-backup.timer systemd-tmpfiles-clean.timer
rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*_Packages
cp -L "$1/vmlinuz" "$1/initrd.img" "$1/../"'

# arm64: the packages' maintainer scripts run under qemu-user, registered for this command only.
foreign=()
if [[ "$arch" != "$(dpkg --print-architecture)" ]]; then
    arm64_root="$(bash "$(dirname "${BASH_SOURCE[0]}")/arm64-toolchain.sh")"
    foreign=(python3 "$(dirname "${BASH_SOURCE[0]}")/foreign-arch.py" "$arm64_root/usr/bin/qemu-aarch64")
fi
"${foreign[@]}" mmdebstrap --variant=apt --mode=root --architectures="$arch" --skip=check/qemu \
    --aptopt='Acquire::Check-Valid-Until "false"' --include="$(IFS=,; echo "${packages[*]}")" \
    --essential-hook="$essential_hook" --customize-hook="$customize_hook" \
    "$suite" "$root" "$mirror" >&2
log "root built in $((SECONDS - started)) s; initrd $(du -h "$work/initrd.img" | cut -f1)"
mke2fs -q -t ext4 -L root -d "$root" "$dir/disk.img" 3G >&2
mv "$work/vmlinuz" "$dir/vmlinuz"
mv "$work/initrd.img" "$dir/initrd.img"
printf '%s\n' "${packages[@]}" > "$dir/packages"
touch "$stamp"
log "image ready in $((SECONDS - started)) s: $dir"
printf '%s\n' "$dir"

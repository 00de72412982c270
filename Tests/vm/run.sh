#!/usr/bin/env bash
# The real plug-in test (make test-vm): the package from `make deb`, installed with apt-get in a QEMU guest
# (Debian bookworm, its own kernel, systemd as PID 1, real udev), serving a real USB CDC-ACM wearable
# (a configfs gadget on dummy_hcd). One QEMU boot per phase, all on one qcow2 overlay of the cached image:
#   1 install   apt-get install ./workoutd_*.deb on a fresh boot (cdc_acm not loaded), steps 1-6
#   2 reboot    a wearable bound before workoutd starts, stored workouts kept, plugging works (2, 7);
#               then the guest's figures: start-up, idle wakeups, RSS, single-flight latency beside a C echo
#   3-5 cut N   pipelined commands, QEMU SIGKILLed after a different number of acks each time (8);
#               the next boot checks what survived against the acks the host saw, then resends
#   6 purge     checks the last cut, then apt-get purge leaves nothing behind (9)
#   7 upgrade   (with PREVIOUS_DEB) the previous release installed and storing, upgraded to DEB by apt while
#               the wearable streams and resends by id (nothing lost, nothing twice); then the downgrade back,
#               whose daemon refuses the newer database (exit 73, named) without altering it; upgraded again (10)
# The guest reports every check over a virtio-serial port into a host file; this script fails on any FAIL,
# on a missing PHASE_OK, and on a cut whose acked commands were not all stored exactly once.
#
# The package's architecture picks the guest: amd64 boots bookworm under qemu-system-x86_64, arm64 boots
# trixie arm64 (a Raspberry-Pi-class hub) under qemu-system-aarch64 -M virt -cpu max; both emulated (TCG).
#
# Usage: Tests/vm/run.sh [DEB [PREVIOUS_DEB]]    (default: the newest dist/workoutd_*.deb; no upgrade phase)
# Environment: WORKOUTD_VM_CACHE (image cache), WORKOUTD_VM_KEEP=1 keeps the run directory,
# WORKOUTD_VM_ONLY=upgrade runs only the upgrade phase (with PREVIOUS_DEB).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
deb="${1:-$(ls -t "$repo"/dist/workoutd_*.deb 2>/dev/null | head -n 1 || true)}"
[[ -f "$deb" ]] || { echo "test-vm: no package (make deb makes dist/workoutd_<version>_<arch>.deb)" >&2; exit 2; }
arch="$(dpkg-deb -f "$deb" Architecture)"
previous_deb="${2:-}"
if [[ -n "$previous_deb" ]]; then
    [[ -f "$previous_deb" && "$(dpkg-deb -f "$previous_deb" Architecture)" == "$arch" ]] \
        || { echo "test-vm: $previous_deb is not a $arch package" >&2; exit 2; }
    dpkg --compare-versions "$(dpkg-deb -f "$previous_deb" Version)" lt "$(dpkg-deb -f "$deb" Version)" \
        || { echo "test-vm: $previous_deb is not older than $deb: no upgrade to test" >&2; exit 2; }
fi
case "$arch" in
    amd64) qemu=(qemu-system-x86_64) console=ttyS0 limit=420 ;;
    # pauth-impdef: QEMU's own pointer-authentication hash instead of the architected QARMA, much cheaper
    # under TCG and invisible to the guest. The aarch64 guest is several times slower here than the amd64 one
    # (docs/decisions/0004-arm64-cross-build.md): a longer limit per boot.
    arm64) qemu=(qemu-system-aarch64 -M virt -cpu max,pauth-impdef=on) console=ttyAMA0 limit=1500 ;;
    *) echo "test-vm: no guest for $arch packages" >&2; exit 2 ;;
esac
for tool in "${qemu[0]}" qemu-img mke2fs python3; do
    command -v "$tool" >/dev/null || { echo "test-vm: $tool missing (apt-get install qemu-system-x86 qemu-system-arm qemu-utils e2fsprogs python3)" >&2; exit 2; }
done

log() { printf 'test-vm: %s\n' "$*" >&2; }
started=$SECONDS
image="$(WORKOUTD_VM_ARCH="$arch" bash "$repo/scripts/vm-image.sh")"
log "image $image ready after $((SECONDS - started)) s"

# O_DIRECT (cache=directsync) needs a real filesystem, not tmpfs.
run_dir="$(mktemp -d "${WORKOUTD_VM_RUNS:-/var/tmp}/workoutd-vm.XXXXXX")"
qemu_pid=""
cleanup() {
    local rc=$?
    [[ -n "$qemu_pid" ]] && kill -KILL "$qemu_pid" 2>/dev/null || true
    if ((rc == 0)) && [[ "${WORKOUTD_VM_KEEP:-0}" != 1 ]]; then
        rm -rf "$run_dir"
    else
        log "run directory kept: $run_dir (report-*.txt, console-*.log)"
    fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT  # so that cleanup kills QEMU when the test itself is stopped

# The payload disk: the package and the guest-side scripts, nothing else of the project.
mkdir -p "$run_dir/payload/debs"
cp "$deb" "$run_dir/payload/debs/"
if [[ -n "$previous_deb" ]]; then
    mkdir -p "$run_dir/payload/previous"
    cp "$previous_deb" "$run_dir/payload/previous/"
fi
cp "$here/guest.py" "$here/guest-early" "$here/guest-run" "$run_dir/payload/"
# The C echo the guest's figures are measured beside (Benchmarks/peers/echo-baseline.c), static for the guest's architecture:
# the arm64 one by the clang of the cross-build root that made the package (scripts/arm64-run.sh).
case "$arch" in
    amd64) cc -O2 -static -o "$run_dir/payload/echo-baseline" "$repo/Benchmarks/peers/echo-baseline.c" ;;
    arm64) echo_dir="$(mktemp -d "$repo/.build-echo.XXXXXX")"
           bash "$repo/scripts/arm64-run.sh" /usr/libexec/swift/bin/clang --target=aarch64-linux-gnu \
               --sysroot=/opt/workoutd-arm64.artifactbundle/trixie-arm64/sysroot -fuse-ld=lld -static -O2 \
               -o "$echo_dir/echo-baseline" "$repo/Benchmarks/peers/echo-baseline.c"
           mv "$echo_dir/echo-baseline" "$run_dir/payload/"; rmdir "$echo_dir" ;;
esac
payload_mb=$(( $(du -sm "$run_dir/payload" | cut -f1) + 16 ))
mke2fs -q -t ext4 -d "$run_dir/payload" "$run_dir/payload.img" "${payload_mb}M"
qemu-img create -q -f qcow2 -b "$image/disk.img" -F raw "$run_dir/overlay.qcow2"

failed=0
fail() { log "FAIL: $*"; failed=1; }

# boot NAME KILL_AFTER_ACKS KERNEL-ARGS...: one guest boot; the report lands in report-NAME.txt.
# KILL_AFTER_ACKS > 0 is a power cut: SIGKILL once that many acks of the stream reached the host.
boot() {
    local name="$1" kill_after="$2"; shift 2
    local report="$run_dir/report-$name.txt" console_log="$run_dir/console-$name.log" t0=$SECONDS
    # The upgrade phase runs apt-get four times (dpkg syncs every file it unpacks): twice the time.
    local limit=$limit
    [[ "$name" == upgrade ]] && limit=$((limit * 2))
    : >"$report"
    # cache=directsync: every write the guest's disk completes is on the host file (O_DIRECT|O_DSYNC), so
    # SIGKILL keeps exactly what the guest kernel wrote out and loses its page cache, as a power cut does.
    "${qemu[@]}" -accel tcg,tb-size=128 -smp 2 -m 768 -display none -monitor none -no-reboot -nic none \
        -kernel "$image/vmlinuz" -initrd "$image/initrd.img" \
        -append "root=/dev/vda rw console=$console quiet loglevel=4 systemd.show_status=0 $*" \
        -drive "file=$run_dir/overlay.qcow2,if=virtio,format=qcow2,cache=directsync" \
        -drive "file=$run_dir/payload.img,if=virtio,format=raw,readonly=on" \
        -device virtio-serial-pci \
        -chardev "file,id=report,path=$report" -device virtserialport,chardev=report,name=vmtest.report \
        -serial "file:$console_log" &
    qemu_pid=$!
    local killed=0
    while kill -0 "$qemu_pid" 2>/dev/null; do
        if ((kill_after > 0)) && { (( $(grep -c '^ACK ' "$report" || true) >= kill_after )) \
                || grep -q '^STREAM_END\|^END' "$report"; }; then
            kill -KILL "$qemu_pid"
            killed=1
            break
        fi
        if ((SECONDS - t0 > limit)); then
            kill -KILL "$qemu_pid"
            fail "$name: guest still running after $limit s, killed"
            break
        fi
        sleep 0.05
    done
    wait "$qemu_pid" 2>/dev/null || true
    qemu_pid=""
    if ((killed)); then
        log "$name: power cut (SIGKILL) after $(grep -c '^ACK ' "$report" || true) acks, $((SECONDS - t0)) s"
    else
        log "$name: guest powered off after $((SECONDS - t0)) s"
    fi
    grep -E '^(PASS|FAIL|FIGURE|INFO)' "$report" | sed "s/^/  [$name] /" >&2 || true
    if grep -q '^FAIL' "$report" || { ((kill_after == 0)) && ! grep -q '^PHASE_OK' "$report"; }; then
        fail "$name (guest journal, last lines:)"
        grep '^JOURNAL ' "$report" | tail -n 150 | sed 's/^JOURNAL /  | /' >&2 || true
        [[ -s "$report" ]] || { log "no report: guest console follows"; tail -n 60 "$console_log" >&2 || true; }
        return 1
    fi
    if ((kill_after > 0)) && ! grep -q '^STREAM_START' "$report"; then
        fail "$name: the stream never started"; grep '^JOURNAL ' "$report" | tail -n 80 >&2 || true; return 1
    fi
}

check_cut() {  # check_cut CUT: the cut's acks against what the next boot found and resent
    if ! python3 "$here/check_cut.py" "$1" "$run_dir/report-cut$1.txt" "$run_dir/report-$2.txt" >&2; then
        fail "power cut $1: acked commands lost or duplicated (above)"
        return 1
    fi
}

# A boot that fails stops the run (what follows builds on it); a cut that lost acked commands is a failure
# too, but the later phases still run and report, so one run shows everything that is wrong.
phases() {
    # WORKOUTD_VM_ONLY=upgrade: the upgrade phase alone on a fresh guest (it installs what it needs itself).
    if [[ "${WORKOUTD_VM_ONLY:-}" == upgrade && -n "$previous_deb" ]]; then
        boot upgrade 0 vmtest.phase=upgrade
        return
    fi
    boot install 0 vmtest.phase=install || return 1
    boot reboot 0 vmtest.phase=reboot vmtest.earlyplug=1 || return 1
    # Three cuts at different moments: early in the stream, mid-way, late.
    boot cut1 12 vmtest.phase=cut vmtest.cut=1 || return 1
    boot cut2 90 vmtest.phase=cut vmtest.recover=1 vmtest.cut=2 || return 1
    check_cut 1 cut2 || true
    boot cut3 200 vmtest.phase=cut vmtest.recover=2 vmtest.cut=3 || return 1
    check_cut 2 cut3 || true
    boot purge 0 vmtest.phase=purge vmtest.recover=3 || return 1
    check_cut 3 purge || true
    if [[ -n "$previous_deb" ]]; then
        boot upgrade 0 vmtest.phase=upgrade || return 1
    fi
}
phases || true

figures="$(grep -h '^FIGURE' "$run_dir"/report-*.txt 2>/dev/null | sed 's/^FIGURE /  /' || true)"
log "figures (seconds unless the name says):"$'\n'"$figures"
if ((failed)); then
    log "FAILED after $((SECONDS - started)) s"
    exit 1
fi
log "all steps passed in $((SECONDS - started)) s"

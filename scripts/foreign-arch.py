#!/usr/bin/python3
"""Runs a command that executes arm64 programs (mmdebstrap of an arm64 root: maintainer scripts, update-initramfs)
on this amd64 machine, without changing the machine: the command runs as root of a new user namespace (uids and
gids 0-65535 mapped to themselves, so files keep their real owners) with a mount namespace and a binfmt_misc
instance of its own (Linux 6.7 and later), where qemu-aarch64 is registered with the F flag (the kernel opens the
interpreter now, so it works inside chroots). The host's binfmt_misc stays as it is.

Usage: scripts/foreign-arch.py QEMU_AARCH64_STATIC COMMAND [ARGS...]   (as root)
QEMU_AARCH64_STATIC: a statically linked qemu-aarch64 (the arm64 build root has one: /usr/bin/qemu-aarch64).
"""
import ctypes
import os
import subprocess
import sys

CLONE_NEWNS, CLONE_NEWUSER = 0x00020000, 0x10000000
# Debian's qemu-user-binfmt entry for aarch64 ELF executables (magic, mask).
AARCH64 = (r":qemu-aarch64:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00"
           r":\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:{}:FPC")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    qemu = os.path.realpath(sys.argv[1])
    if not os.access(qemu, os.X_OK):
        sys.exit(f"foreign-arch: {qemu} is not an executable")
    libc = ctypes.CDLL(None, use_errno=True)
    ready_r, ready_w = os.pipe()
    go_r, go_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        if libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            sys.stderr.write(f"foreign-arch: unshare: {os.strerror(ctypes.get_errno())}\n")
            os._exit(70)
        os.write(ready_w, b"x")
        os.read(go_r, 1)  # the parent has written the id maps
        os.setgid(0)
        os.setuid(0)
        binfmt = "/run/foreign-arch-binfmt"
        subprocess.run(["mount", "--make-rprivate", "/"], check=True)
        os.makedirs(binfmt, exist_ok=True)
        subprocess.run(["mount", "-t", "binfmt_misc", "binfmt_misc", binfmt], check=True)
        with open(f"{binfmt}/register", "w") as register:
            register.write(AARCH64.format(qemu))
        os.execvp(sys.argv[2], sys.argv[2:])
    os.read(ready_r, 1)
    for name in ("uid_map", "gid_map"):
        with open(f"/proc/{pid}/{name}", "w") as idmap:
            idmap.write("0 0 65536\n")
    os.write(go_w, b"x")
    _, status = os.waitpid(pid, 0)
    sys.exit(os.waitstatus_to_exitcode(status))


if __name__ == "__main__":
    main()

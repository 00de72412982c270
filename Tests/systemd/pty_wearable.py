#!/usr/bin/env python3
"""A wearable on a pseudo-terminal, for the real-systemd test.

Allocates a pty, gives its device node the group and mode the udev rule gives a real wearable, prints
the node's path, then relays: each line on stdin is written to the device, each line the daemon
writes back is printed on stdout. Like a real USB device it does not hold the node open itself, so
the daemon's exclusive open (TIOCEXCL) can end with the daemon. A pty keeps that flag while its master
is open, unlike a USB tty whose last close releases it, so when the daemon's side closes (read gives
EIO) the helper clears it the way unplugging would, and a restarted daemon can reopen the node.
"""
import argparse
import errno
import fcntl
import os
import select
import sys
import time
import termios
import tty


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--group", type=int, required=True, help="gid the node belongs to (udev's GROUP=)")
    parser.add_argument("--mode", type=lambda text: int(text, 8), default=0o660)
    options = parser.parse_args()

    master, slave = os.openpty()
    node = os.ttyname(slave)
    tty.setraw(slave)  # no echo or line editing before the daemon configures it
    os.fchown(slave, 0, options.group)
    os.fchmod(slave, options.mode)
    os.close(slave)
    print(node, flush=True)

    pending = b""
    released = True
    stdin = sys.stdin.fileno()
    while True:
        readable, _, _ = select.select([stdin, master], [], [], 1.0)
        if stdin in readable:
            line = os.read(stdin, 65536)
            if not line:
                return 0
            os.write(master, line)
        if master in readable:
            try:
                chunk = os.read(master, 65536)
            except OSError as error:
                if error.errno != errno.EIO:
                    raise
                # EIO: no process has the node open (the daemon is restarting); wait for it.
                if not released:
                    release_exclusive(node)
                    released = True
                time.sleep(0.05)
                continue
            released = False
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                sys.stdout.write(line.decode("utf-8", "replace").rstrip("\r") + "\n")
            sys.stdout.flush()


def release_exclusive(node: str) -> None:
    """Clears TIOCEXCL as a real device's final close would (root may open an exclusive tty)."""
    try:
        descriptor = os.open(node, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError:
        return
    try:
        fcntl.ioctl(descriptor, termios.TIOCNXCL)
    finally:
        os.close(descriptor)


if __name__ == "__main__":
    sys.exit(main())

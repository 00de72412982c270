#!/usr/bin/env python3
"""The reference C client's example wearable against the real daemon, through a relay that injects faults.

Starts workoutd on a socat pty pair (side A) and puts a relay between side B and a pty the example opens.
Two runs, each with a daemon and state directory of its own:

- drop: the relay drops the first reply to each command id. The example must resend the same bytes with the
  same id; the hub answers the resend from memory. Asserts each command went out exactly twice, byte for byte
  the same, and that `workoutd workouts`/`shares --json` hold exactly one workout and one share.
- rate_limited: the relay answers the first send of each id itself with rate_limited and retry_after_ms. Asserts
  the resend (same bytes) came no sooner than retry_after_ms after that reply, measured in the relay.

Usage: Tests/clients/wearable-relay.py path/to/workoutd path/to/wearable
"""
import json
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import tty

RETRY_AFTER_MS = 300


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def command_id(line):
    try:
        return json.loads(line).get("id")
    except ValueError:
        return None


def relay(mode, hub_fd, wearable_fd, child):
    """Moves lines between the example (wearable_fd) and the hub until the example exits."""
    sent = {}  # id -> list of (monotonic time, line bytes) as the wearable sent them
    limited_at = {}  # id -> when the relay answered rate_limited
    dropped = set()
    buffers = {hub_fd: b"", wearable_fd: b""}
    open_fds = [hub_fd, wearable_fd]
    while child.poll() is None or wearable_fd in open_fds and select.select([wearable_fd], [], [], 0)[0]:
        ready, _, _ = select.select(open_fds, [], [], 0.05)
        for fd in ready:
            try:
                data = os.read(fd, 4096)
            except OSError:
                data = b""
            if not data:
                open_fds.remove(fd)
                continue
            buffers[fd] += data
            while b"\n" in buffers[fd]:
                line, buffers[fd] = buffers[fd].split(b"\n", 1)
                line += b"\n"
                now = time.monotonic()
                ident = command_id(line)
                if fd == wearable_fd:
                    sent.setdefault(ident, []).append((now, line))
                    if mode == "rate_limited" and ident not in limited_at:
                        limited_at[ident] = now
                        reply = {"status": "error", "id": ident, "error": {
                            "code": "rate_limited", "retry_after_ms": RETRY_AFTER_MS,
                            "message": "Too many commands; retry later."}}
                        os.write(wearable_fd, json.dumps(reply, separators=(",", ":")).encode() + b"\n")
                    else:
                        os.write(hub_fd, line)
                else:
                    if mode == "drop" and ident not in dropped:
                        dropped.add(ident)
                    else:
                        os.write(wearable_fd, line)
        if not open_fds:
            break
    return sent, limited_at


def run(mode, workoutd, wearable, work):
    os.makedirs(work)
    pair = subprocess.Popen(["socat", f"pty,raw,echo=0,link={work}/A", f"pty,raw,echo=0,link={work}/B"],
                            stderr=subprocess.DEVNULL)
    daemon = None
    try:
        assert wait_for(lambda: os.path.exists(f"{work}/A") and os.path.exists(f"{work}/B"), 5), "no socat ptys"
        log = open(f"{work}/workoutd.log", "wb")
        daemon = subprocess.Popen([workoutd, "--device", f"{work}/A", "--state-dir", f"{work}/state",
                                   "--control-socket", "none"], stderr=log)
        assert wait_for(lambda: b"device connected" in open(f"{work}/workoutd.log", "rb").read(), 30), \
            "the daemon did not connect to the pty"
        hub_fd = os.open(f"{work}/B", os.O_RDWR | os.O_NOCTTY)
        tty.setraw(hub_fd)
        master, slave = os.openpty()
        tty.setraw(slave)
        child = subprocess.Popen([wearable, os.ttyname(slave)], stdout=subprocess.PIPE, text=True)
        try:
            sent, limited_at = relay(mode, hub_fd, master, child)
        finally:
            if child.poll() is None:
                child.kill()
            child.wait()
            for fd in (master, slave, hub_fd):
                os.close(fd)
        output = child.stdout.read()
        print(f"--- {mode}: the example's output\n{output}", end="")
        assert child.returncode == 0, f"{mode}: the example exited {child.returncode}"
        assert len(sent) == 3, f"{mode}: expected 3 command ids, got {sorted(sent, key=str)}"
        for ident, sends in sent.items():
            assert len(sends) == 2, f"{mode}: id {ident} was sent {len(sends)} times, expected 2"
            assert sends[0][1] == sends[1][1], f"{mode}: the resend of id {ident} differs: {sends}"
        if mode == "rate_limited":
            for ident, sends in sent.items():
                gap_ms = (sends[1][0] - limited_at[ident]) * 1000
                print(f"{mode}: id {ident} resent {gap_ms:.0f} ms after rate_limited (retry_after_ms {RETRY_AFTER_MS})")
                assert gap_ms >= RETRY_AFTER_MS, f"id {ident} resent after {gap_ms:.0f} ms"
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
        daemon = None
        for table, expected in (("workouts", 1), ("shares", 1)):
            rows = subprocess.run([workoutd, table, "--state-dir", f"{work}/state", "--json"], check=True,
                                  capture_output=True, text=True).stdout.splitlines()
            rows = [json.loads(row) for row in rows if row.strip()]
            print(f"{mode}: workoutd {table} --json: {len(rows)} row(s)")
            assert len(rows) == expected, f"{mode}: {len(rows)} {table} stored, expected {expected}: {rows}"
    finally:
        if daemon is not None:
            daemon.kill()
            daemon.wait()
        pair.kill()
        pair.wait()


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    workoutd, wearable = (os.path.abspath(path) for path in sys.argv[1:])
    with tempfile.TemporaryDirectory(prefix="wearable-relay.") as work:
        for mode in ("drop", "rate_limited"):
            run(mode, workoutd, wearable, os.path.join(work, mode))
    print("wearable-relay: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

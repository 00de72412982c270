#!/usr/bin/env python3
"""What an SD card pays per durable acked command: runs each program on a fresh pty with a fresh state
directory, sends N durable commands in single flight (each after the previous reply) and then N pipelined
(all at once), and measures per command, for each phase:

- bytes the kernel wrote for the process (`/proc/PID/io` write_bytes: all threads, page-cache pages dirtied),
- growth of the files in the state directory (the database, its WAL),
- pwrite64/write calls to files and fsync-family calls, counted by `strace -f -c` attached to every thread.

Prints one markdown table row per program and phase. Used by scripts/bench.d/sdcard.sh.

Usage: bench/sdcard-writes.py N NAME='COMMAND with {device} and {state}' ...
"""
import os
import signal
import subprocess
import sys
import time

from pty_daemon import PtyDaemon, durable_commands

SYSCALLS = ("pwrite64", "pwritev", "pwritev2", "fsync", "fdatasync", "sync_file_range")
SYNCS = ("fsync", "fdatasync", "sync_file_range")


def send(daemon, mode, count):
    if mode == "single":
        for line in durable_commands(count):
            daemon.exchange([line])
    else:
        daemon.exchange(durable_commands(count))


def write_bytes(pid):
    with open(f"/proc/{pid}/io") as io:
        for row in io:
            if row.startswith("write_bytes:"):
                return int(row.split()[1])
    raise SystemExit(f"no write_bytes in /proc/{pid}/io")


def state_size(state):
    return sum(os.path.getsize(os.path.join(state, name)) for name in os.listdir(state))


def measure(name, template, count):
    daemon = PtyDaemon(template, "sdcard-")
    state, program = daemon.state, daemon.process
    try:
        # Warm up: the database exists, the schema is in place, the first checkpoint is behind.
        send(daemon, "single", 20)
        rows = []
        for mode in ("single", "pipelined"):
            summary = os.path.join(daemon.work, f"strace-{mode}")
            strace = subprocess.Popen(["strace", "-f", "-c", "-e", "trace=" + ",".join(SYSCALLS), "-o", summary,
                                       "-p", str(program.pid)], stderr=subprocess.PIPE)
            if b"attached" not in strace.stderr.readline():
                raise SystemExit("strace could not attach")
            time.sleep(0.2)
            bytes_before, size_before = write_bytes(program.pid), state_size(state)
            send(daemon, mode, count)
            time.sleep(0.2)
            bytes_after, size_after = write_bytes(program.pid), state_size(state)
            strace.send_signal(signal.SIGINT)
            strace.wait(timeout=60)
            calls = {}
            with open(summary) as text:
                for row in text:
                    fields = row.split()
                    if fields and fields[-1] in SYSCALLS and fields[3].isdigit():
                        calls[fields[-1]] = int(fields[3])
            rows.append({
                "name": name, "mode": mode,
                "bytes": (bytes_after - bytes_before) / count,
                "growth": (size_after - size_before) / count,
                "pwrite": sum(v for k, v in calls.items() if k not in SYNCS) / count,
                "fsync": sum(v for k, v in calls.items() if k in SYNCS) / count,
            })
        return rows
    finally:
        daemon.stop()


def main():
    count = int(sys.argv[1])
    programs = [argument.split("=", 1) for argument in sys.argv[2:]]
    print("| program | commands | KB written per command (write_bytes) | state-dir growth per command (B) "
          "| pwrite calls per command | fsync-family calls per command |")
    print("|---|---|---:|---:|---:|---:|")
    for name, template in programs:
        for row in measure(name, template, count):
            print(f"| {row['name']} | {row['mode']} | {row['bytes'] / 1024:.2f} | {row['growth']:.0f} "
                  f"| {row['pwrite']:.2f} | {row['fsync']:.3f} |", flush=True)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""What an SD card pays per durable acked command: runs each program on a fresh pty with a fresh state
directory, sends N durable commands in single flight (each after the previous reply) and then N pipelined
(all at once), and measures per command, for each phase:

- bytes the kernel wrote for the process (`/proc/PID/io` write_bytes: all threads, page-cache pages dirtied),
- growth of the files in the state directory (the database, its WAL),
- pwrite64/write calls to files, fsync-family calls and fcntl calls (SQLite's file locks), counted by
  `strace -f -c` attached to every thread.

With BENCH_SDCARD_STORED (e.g. "0,20000,200000"), each program is measured once per figure, its database first
filled with that many ended workouts of other devices (the cost per command must not grow with the
history); the program is stopped for the fill and started again on the same files.

Prints one markdown table row per program, stored-workout count and phase. Used by Benchmarks/parts/sdcard.sh.

Usage: Benchmarks/probes/sdcard-writes.py N NAME='COMMAND with {device} and {state}' ...
"""
import os
import signal
import sqlite3
import subprocess
import sys
import time

from pty_daemon import PtyDaemon, durable_commands

SYSCALLS = ("pwrite64", "pwritev", "pwritev2", "fsync", "fdatasync", "sync_file_range", "fcntl")
LOCKS = ("fcntl",)
SYNCS = ("fsync", "fdatasync", "sync_file_range")


# Measured as wearables talk, every command with an id (BENCH_SDCARD_IDS=0: without, as before).
IDS = os.environ.get("BENCH_SDCARD_IDS", "1") != "0"


def send(daemon, mode, count):
    if mode == "single":
        for line in durable_commands(count, IDS):
            daemon.exchange([line])
    else:
        daemon.exchange(durable_commands(count, IDS))


def write_bytes(pid):
    with open(f"/proc/{pid}/io") as io:
        for row in io:
            if row.startswith("write_bytes:"):
                return int(row.split()[1])
    raise SystemExit(f"no write_bytes in /proc/{pid}/io")


def state_size(state):
    return sum(os.path.getsize(os.path.join(state, name)) for name in os.listdir(state))


def fill(state, workouts):
    """`workouts` ended workouts of other devices, in whichever database the program keeps in `state`."""
    if workouts == 0:
        return
    for name in os.listdir(state):
        if not name.endswith(".sqlite"):
            continue
        db = sqlite3.connect(os.path.join(state, name), isolation_level=None)
        columns = {row[1] for row in db.execute("PRAGMA table_info(workout)")}
        db.execute("BEGIN")
        first = db.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM workout").fetchone()[0]
        numbers = "WITH RECURSIVE n(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM n WHERE i < ?) "
        if "intensityLevel" in columns:  # workoutd
            db.execute(numbers + "INSERT INTO workout (id, device, location, date, intensityLevel, startedAt, endedAt, "
                       "startCommandID, endCommandID) SELECT i, 'bench-other-' || (i % 50), 'Gary''s Gym', 1584387913.0, 5, "
                       "1700000000.5 + i, 1700001800.5 + i, NULL, NULL FROM n", (first, first + workouts - 1))
        else:  # the Python durable peer
            db.execute(numbers + "INSERT INTO workout (id, location, date, intensity, started_at, ended_at) "
                       "SELECT i, 'Gary''s Gym', '2020-03-16 19:45:13 +0000', 5, 1700000000.5 + i, 1700001800.5 + i FROM n",
                       (first, first + workouts - 1))
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        db.close()


def measure(name, template, count, stored, pipelined):
    daemon = PtyDaemon(template, "sdcard-")
    state = daemon.state
    try:
        # Warm up: the database exists, the schema is in place, the first checkpoint is behind.
        send(daemon, "single", 20)
        if stored:
            daemon.restart(lambda: fill(state, stored))
            send(daemon, "single", 20)
        program = daemon.process
        rows = []
        # Pipelined only beside the first stored count: the peer's end_workout scans its table, so its pipelined
        # phase beside 200,000 workouts outlasts any sensible wait, and single flight is what matters there.
        for mode in ("single", "pipelined") if pipelined else ("single",):
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
                "name": name, "mode": mode, "stored": stored,
                "bytes": (bytes_after - bytes_before) / count,
                "growth": (size_after - size_before) / count,
                "pwrite": sum(v for k, v in calls.items() if k not in SYNCS and k not in LOCKS) / count,
                "fcntl": sum(v for k, v in calls.items() if k in LOCKS) / count,
                "fsync": sum(v for k, v in calls.items() if k in SYNCS) / count,
            })
        return rows
    finally:
        daemon.stop()


def main():
    count = int(sys.argv[1])
    programs = [argument.split("=", 1) for argument in sys.argv[2:]]
    stored = [int(n) for n in os.environ.get("BENCH_SDCARD_STORED", "0").split(",")]
    print("| program | commands | stored workouts | KB written per command (write_bytes) | state-dir growth per command (B) "
          "| pwrite calls per command | fsync-family calls per command | fcntl calls per command |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for workouts in stored:
        for name, template in programs:
            for row in measure(name, template, count, workouts, workouts == stored[0]):
                print(f"| {row['name']} | {row['mode']} | {row['stored']} | {row['bytes'] / 1024:.2f} | {row['growth']:.0f} "
                      f"| {row['pwrite']:.2f} | {row['fsync']:.3f} | {row['fcntl']:.2f} |", flush=True)


if __name__ == "__main__":
    main()

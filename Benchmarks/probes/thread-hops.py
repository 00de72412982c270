#!/usr/bin/env python3
"""Thread hops per single-flight command: which thread wakes which while a durable command goes
from the pty to its reply, how often per command, and how long each woken thread waited for a CPU.

Runs the program on a fresh pty and state directory (pty_daemon.PtyDaemon), sends N start/end commands with ids in
single flight (each after the previous reply) under `perf record` of the scheduler's wakeup and switch events
(system-wide: a pty's bytes are handed on by a kernel worker), and attributes every wakeup of one of the
program's threads to its waker: another of its threads (a hop inside the program), the client (the command's
bytes), or the kernel (a worker or an interrupt). A hop's cost is the time from the wakeup to the woken thread
running (the scheduler's latency), plus the context switches it takes, which the counts show.

Needs `perf` (Debian: linux-perf) with the sched tracepoints (tracefs mounted; root). Prints a markdown table.

Usage: Benchmarks/probes/thread-hops.py N 'COMMAND with {device} and {state}'
"""
import collections
import os
import re
import statistics
import subprocess
import sys
import time

from pty_daemon import PtyDaemon, durable_commands

WAKEUP = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<tid>\d+)\s+\[\d+\]\s+(?P<time>[\d.]+):\s+sched:sched_wakeup:\s+"
                    r"comm=(?P<target>.*?) pid=(?P<target_tid>\d+) ")
SYNC = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<tid>\d+)\s+\[\d+\]\s+(?P<time>[\d.]+):\s+syscalls:sys_(?P<edge>enter|exit)_fdatasync")
SWITCH = re.compile(r"^\s*(?P<comm>.+?)\s+(?P<tid>\d+)\s+\[\d+\]\s+(?P<time>[\d.]+):\s+sched:sched_switch:\s+"
                    r"prev_comm=.*? prev_pid=(?P<prev>\d+) .*?==> next_comm=(?P<next_comm>.*?) next_pid=(?P<next>\d+) ")


def threads(pid):
    """The program's threads: tid → name."""
    names = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                names[int(tid)] = comm.read().strip()
        except FileNotFoundError:
            pass
    return names


def role(name):
    """A thread's role by its name, so runs compare although thread ids differ."""
    if name.startswith("NIO-SGLTN"):
        return "device event loop"
    if name.endswith("overcommit"):
        return "dispatch thread (GRDB's writer queue)"
    return name


PHASES = (
    ("the command's bytes reach the loop → fdatasync begins (read, decode, session step, the SQL, the WAL frames written)",
     "woken", "sync"),
    ("fdatasync", "sync", "synced"),
    ("fdatasync returns → the reply reaches the client (the commit's end, encoding, the write; the pty)", "synced", "replied"),
)


def main():
    count = int(sys.argv[1])
    daemon = PtyDaemon(sys.argv[2], "hops-")
    data = os.path.join(daemon.work, "perf.data")
    try:
        for line in durable_commands(200, True):  # warm-up: schema, statements, first checkpoint behind
            daemon.exchange([line])
        names = threads(daemon.pid)
        client = os.getpid()
        perf = subprocess.Popen(["perf", "record", "-q", "-a", "-e", "sched:sched_wakeup", "-e", "sched:sched_switch",
                                 "-e", "syscalls:sys_enter_fdatasync", "-e", "syscalls:sys_exit_fdatasync", "-o", data], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        time.sleep(1.0)
        for line in durable_commands(count, True):
            daemon.exchange([line])
        time.sleep(0.2)
        perf.send_signal(2)
        perf.wait(timeout=120)
        names.update(threads(daemon.pid))
        script = subprocess.run(["perf", "script", "-i", data, "-F", "comm,tid,cpu,time,event,trace"],
                                capture_output=True, text=True, check=True).stdout
    finally:
        daemon.stop()

    woken = {}  # tid → (time of its wakeup, waker's role)
    hops = collections.defaultdict(list)
    marks, spans = {}, collections.defaultdict(list)  # one command's moments, and each phase's lengths
    for row in script.splitlines():
        if match := SYNC.match(row):
            if int(match["tid"]) in names and "woken" in marks:
                marks["sync" if match["edge"] == "enter" else "synced"] = float(match["time"])
            continue
        if (match := WAKEUP.match(row)) and int(match["target_tid"]) == client:
            marks["replied"] = float(match["time"])
            if all(end in marks for _, _, end in PHASES) and "woken" in marks:
                for title, start, end in PHASES:
                    spans[title].append(marks[end] - marks[start])
            marks = {}
            continue
        if match := WAKEUP.match(row):
            target = int(match["target_tid"])
            if target not in names:
                continue
            waker, at = int(match["tid"]), float(match["time"])
            if waker not in names and role(names[target]) == "device event loop" and "woken" not in marks:
                marks["woken"] = at
            if waker in names:
                who = role(names[waker])
            elif waker == client:
                who = "client (writes the command)"
            else:
                who = "kernel (" + re.sub(r"[/:]\d.*", "", match["comm"].strip()) + ")"
            woken[target] = (float(match["time"]), who)
        elif match := SWITCH.match(row):
            target = int(match["next"])
            if target in woken:
                at, who = woken.pop(target)
                hops[(who, role(names[target]))].append(float(match["time"]) - at)

    print("| waker → woken thread of the program | per command | wait for a CPU, median µs | p99 µs |")
    print("|---|---:|---:|---:|")
    for (who, target), waits in sorted(hops.items(), key=lambda item: -len(item[1])):
        if len(waits) / count < 0.005:
            continue  # rarer than 1 in 200 commands (0.00 a command): preemptions, not the command's path
        waits.sort()
        p99 = waits[min(len(waits) - 1, int(len(waits) * 0.99))]
        print(f"| {who} → {target} | {len(waits) / count:.2f} | {statistics.median(waits) * 1e6:.1f} | {p99 * 1e6:.1f} |")
    print()
    print(f"| where a single-flight command's time goes ({len(spans[PHASES[0][0]])} of {count} commands traced whole) "
          "| median µs | p99 µs |")
    print("|---|---:|---:|")
    for title, _, _ in PHASES:
        values = sorted(spans[title])
        if values:
            print(f"| {title} | {statistics.median(values) * 1e6:.1f} "
                  f"| {values[min(len(values) - 1, int(len(values) * 0.99))] * 1e6:.1f} |")


if __name__ == "__main__":
    main()

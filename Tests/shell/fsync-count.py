#!/usr/bin/env python3
"""Acked means on disk: counts the daemon's fsync/fdatasync calls per acknowledged durable command.

Runs the real daemon on a pty and attaches `strace -f -c -e trace=fsync,fdatasync` to it twice: while N
commands go through in single flight (each sent after the previous reply), and while N go through
pipelined (all written at once). It asserts what an ack promises on a power cut: at least one sync per
single-flight command (each ack waited for its own commit to reach the disk), and fewer syncs than
commands when pipelined (group commit: one transaction, one sync, per read batch). Prints the figures.
A store whose commits are not synced (SQLite WAL with synchronous=NORMAL, which GRDB's DatabasePool
sets) fails the first assertion with about 0 syncs per command.

Usage: Tests/shell/fsync-count.py path/to/workoutd [N]
"""
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import tty

SYNCS = ("fsync", "fdatasync")
# Also counted per single-flight command, and held to what the store's design needs: a commit's WAL
# frames (at most 3 pages) reach the file in one pwrite64 (CWALWriteGathering; SQLite's own VFS makes two per
# frame, its header and its page), and no checkpoint falls within this test's few commands; 6 fcntl calls are
# SQLite's WAL locking of one transaction (read snapshot 3, write lock 2, release 1; SQLiteWorkoutStore.init says why).
COUNTED = SYNCS + ("pwrite64", "fcntl")
MAX_PWRITES_PER_COMMAND = 1
MAX_FCNTL_PER_COMMAND = 6


def commands(count):
    """Alternating start/end, so every one of them is a durable state change that gets an ok."""
    for index in range(count):
        if index % 2 == 0:
            yield b'{"command_type":"start_workout","location":"fsync test","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}\n'
        else:
            yield b'{"command_type":"end_workout"}\n'


def read_replies(master, count, buffer):
    """Reads until `count` reply lines have arrived; returns them and what is left over."""
    replies = []
    deadline = time.monotonic() + 120  # a hang, not a speed limit
    while len(replies) < count:
        if time.monotonic() > deadline:
            raise SystemExit(f"FAIL  no reply after {len(replies)} of {count}")
        readable, _, _ = select.select([master], [], [], 1.0)
        if readable:
            buffer += os.read(master, 65536)
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                replies.append(line)
    return replies, buffer


def traced(pid, options):
    """Attaches strace with `options` to every thread of `pid`; returns once it is attached."""
    strace = subprocess.Popen(["strace", "-f", *options, "-p", str(pid)], stderr=subprocess.PIPE)
    line = strace.stderr.readline()
    if b"attached" not in line:
        raise SystemExit(f"FAIL  strace could not attach: {line!r}")
    return strace


def counted(pid, summary):
    """Counts the calls in COUNTED into `summary`."""
    return traced(pid, ["-c", "-e", "trace=" + ",".join(COUNTED), "-o", summary])


def traced_threads(pid, log):
    """Logs each read and sync into `log` with the thread that made it."""
    return traced(pid, ["-e", "trace=read,fsync,fdatasync", "-s", "24", "-o", log])


def threads_of(strace, log):
    """Stops tracing; returns the threads that read the commands and the threads that synced, as sets of ids."""
    strace.send_signal(signal.SIGINT)
    strace.wait(timeout=60)
    readers, syncers = set(), set()
    with open(log) as text:
        for row in text:
            fields = row.split(None, 1)
            if len(fields) < 2 or not fields[0].isdigit():
                continue
            if fields[1].startswith("read(") and "command_type" in fields[1]:
                readers.add(int(fields[0]))
            elif fields[1].startswith(("fsync(", "fdatasync(")):
                syncers.add(int(fields[0]))
    return readers, syncers


def detach(strace, summary):
    """Stops tracing (the daemon keeps running) and returns the calls counted, by name ("sync": the fsync family)."""
    strace.send_signal(signal.SIGINT)
    strace.wait(timeout=60)
    calls = {"sync": 0, "pwrite64": 0, "fcntl": 0}
    with open(summary) as text:
        for row in text:
            fields = row.split()
            if fields and fields[-1] in COUNTED and fields[3].isdigit():
                calls["sync" if fields[-1] in SYNCS else fields[-1]] += int(fields[3])
    return calls


def send(master, mode, count):
    """Sends `count` durable commands; returns how many were acked."""
    buffer = b""
    replies = []
    if mode == "single":
        for line in commands(count):
            os.write(master, line)
            got, buffer = read_replies(master, 1, buffer)
            replies += got
    else:
        os.write(master, b"".join(commands(count)))
        replies, buffer = read_replies(master, count, buffer)
    return sum(b'"status":"ok"' in reply for reply in replies)


def main():
    workoutd = sys.argv[1]
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 40
    with tempfile.TemporaryDirectory() as work:
        master, slave = os.openpty()
        node = os.ttyname(slave)
        tty.setraw(slave)
        os.close(slave)
        log_path = os.path.join(work, "workoutd.log")
        # A configuration of its own, with the clock trusted as synchronised (as on a hub after NTP): where the
        # clock reads unsynchronised (a container), each workout also writes its clock mark, a WAL frame more.
        config_path = os.path.join(work, "workoutd.yaml")
        with open(config_path, "w") as config:
            config.write("clock:\n  assume_synchronized: true\n")
        with open(log_path, "wb") as log:
            daemon = subprocess.Popen(
                [workoutd, "--config", config_path, "--device", node, "--state-dir", os.path.join(work, "state"),
                 "--control-socket", "none"],
                stderr=log)
        try:
            for _ in range(2400):
                with open(log_path, "rb") as log:
                    if b"device connected" in log.read():
                        break
                time.sleep(0.05)
            else:
                raise SystemExit("FAIL  the daemon never connected to the pty")
            # Not counted: the device's first commit lays out its reply ring (1,024 slots, once per device).
            if send(master, "single", 2) != 2:
                raise SystemExit("FAIL  the warm-up commands were not acked")
            figures = {}
            for mode in ("single", "pipelined"):
                summary = os.path.join(work, f"strace-{mode}.txt")
                strace = counted(daemon.pid, summary)
                acked = send(master, mode, count)
                figures[mode] = detach(strace, summary)
                if acked != count:
                    raise SystemExit(f"FAIL  {mode}: {acked} of {count} commands acked")
            log = os.path.join(work, "strace-threads.txt")
            strace = traced_threads(daemon.pid, log)
            acked = send(master, "single", count)
            readers, syncers = threads_of(strace, log)
            if acked != count:
                raise SystemExit(f"FAIL  single flight, traced by thread: {acked} of {count} commands acked")
        finally:
            daemon.terminate()
            daemon.wait(timeout=60)
    single, pipelined = figures["single"]["sync"], figures["pipelined"]["sync"]
    pwrites, locks = figures["single"]["pwrite64"], figures["single"]["fcntl"]
    print(f"fsync-family calls for {count} durable commands: single flight {single} "
          f"({single / count:.2f} per command), pipelined {pipelined} ({pipelined / count:.2f} per command)")
    print(f"single flight, per command: {pwrites / count:.2f} pwrite64, {locks / count:.2f} fcntl; "
          f"threads reading commands {sorted(readers)}, syncing {sorted(syncers)}")
    failed = 0
    for name, passed in [
        ("every single-flight ack waited for a sync of its own (>= 1 fsync per command)", single >= count),
        ("pipelined commands share syncs (group commit: < 1 fsync per command)", pipelined < count),
        (f"a single-flight command's WAL frames reach the file in one write (<= {MAX_PWRITES_PER_COMMAND} pwrite64)",
         pwrites <= MAX_PWRITES_PER_COMMAND * count),
        (f"a single-flight command takes no lock call beyond one WAL transaction's (<= {MAX_FCNTL_PER_COMMAND} fcntl)",
         locks <= MAX_FCNTL_PER_COMMAND * count),
        # No hop to the writer's thread and back for a lone command (SQLiteWorkoutStore.commitImmediately).
        ("a single-flight command commits on the thread that read it (no hop to a writer thread and back)",
         len(readers) == 1 and syncers == readers),
    ]:
        print(("PASS  " if passed else "FAIL  ") + name)
        failed += not passed
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Starts workoutd the way systemd does (Type=notify, watchdog on) on real ptys and measures it from outside.

Used by Benchmarks/parts/idle.sh and Benchmarks/parts/startup.sh; prints one JSON object.

  daemon_probe.py idle    --workoutd BIN --config FILE --state-dir DIR --devices N --seconds S
  daemon_probe.py startup --workoutd BIN --config FILE --state-dir DIR [--drop-caches]
  daemon_probe.py seed    --state-dir DIR --workouts N     (into a database the daemon created)

The probe is systemd's stand-in: it binds the NOTIFY_SOCKET datagram socket, sets WATCHDOG_USEC and
WATCHDOG_PID (the daemon's own pid, as systemd does), and takes READY=1 and the WATCHDOG=1 pings from it.
Wakeups are the kernel's context-switch counters (voluntary + nonvoluntary) summed over every thread in
/proc/PID/task: each one is a time a thread went to sleep and was woken again (or was preempted).
"""
import argparse
import json
import os
import select
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

START = b'{"command_type":"start_workout","location":"Probe Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":5}\n'


def thread_switches(pid):
    """Voluntary + nonvoluntary context switches of every live thread, by thread id."""
    counts = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/status") as status:
                counts[tid] = sum(int(line.split()[1]) for line in status
                                  if line.startswith(("voluntary_ctxt_switches", "nonvoluntary_ctxt_switches")))
        except (FileNotFoundError, ProcessLookupError):
            pass  # the thread ended while we looked
    return counts


class SwitchCounter:
    """Context switches of a whole process over a period, threads that start or end during it included.

    A thread's counters vanish with it, so the threads are sampled often (reading /proc wakes nothing in the
    daemon) and an ended thread counts with its last sample: at most one sampling period of it is missed.
    """

    def __init__(self, pid):
        self.pid = pid
        self.start = thread_switches(pid)
        self.last = dict(self.start)
        self.threads_seen = set(self.start)

    def sample(self):
        for tid, count in thread_switches(self.pid).items():
            self.last[tid] = count
            self.threads_seen.add(tid)

    def by_thread_name(self):
        """Switches during the period by thread name (threads of one name summed), for saying who wakes."""
        names = {}
        for tid, count in self.last.items():
            try:
                with open(f"/proc/{self.pid}/task/{tid}/comm") as comm:
                    name = comm.read().strip()
            except FileNotFoundError:
                name = "(ended)"
            names[name] = names.get(name, 0) + count - self.start.get(tid, 0)
        return {name: count for name, count in names.items() if count}

    def total(self):
        return sum(count - self.start.get(tid, 0) for tid, count in self.last.items())


class Daemon:
    """workoutd under a pretend systemd: notify socket, watchdog variables, ptys as its devices."""

    def __init__(self, args, devices, watchdog_usec=10_000_000):
        self.work = tempfile.mkdtemp(prefix="workoutd-probe.")
        self.notify_path = os.path.join(self.work, "notify.sock")
        self.notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.notify.bind(self.notify_path)
        self.masters, device_paths = [], []
        for _ in range(devices):
            master, slave = os.openpty()
            device_paths.append(os.ttyname(slave))
            os.close(slave)  # the daemon opens it by path; the master keeps the pty alive
            self.masters.append(master)
        self.messages = []
        self.pings = 0
        self.ready_at = None
        env = dict(os.environ, NOTIFY_SOCKET=self.notify_path, WATCHDOG_USEC=str(watchdog_usec))
        command = [args.workoutd, "serve", "--config", args.config, "--state-dir", args.state_dir,
                   "--control-socket", os.path.join(self.work, "control.sock")]
        for path in device_paths:
            command += ["--device", path]
        # WATCHDOG_PID is the daemon's pid, as systemd sets it: the shell's $$ is the pid exec keeps.
        self.started_at = time.monotonic()
        self.process = subprocess.Popen(
            ["/bin/sh", "-c", 'WATCHDOG_PID=$$ exec "$@"', "sh"] + command, env=env,
            stdout=subprocess.DEVNULL, stderr=open(os.path.join(self.work, "daemon.log"), "wb"))

    def take_notifications(self, timeout):
        """Reads notify datagrams for up to `timeout` seconds (returns early after READY=1 when waiting for it)."""
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                return
            readable, _, _ = select.select([self.notify], [], [], remaining)
            if not readable:
                return
            message = self.notify.recv(65536)
            now = time.monotonic()
            fields = message.decode(errors="replace").split("\n")
            self.messages.append(fields)
            if "WATCHDOG=1" in fields:
                self.pings += 1
            if "READY=1" in fields and self.ready_at is None:
                self.ready_at = now
                return

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while self.ready_at is None:
            if self.process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"workoutd never sent READY=1 (exit {self.process.poll()}); log: {self.log_tail()}")
            self.take_notifications(0.5)
        return self.ready_at - self.started_at

    def round_trip(self, master, timeout=10):
        """Writes one start_workout and returns seconds until its reply line is back."""
        sent = time.monotonic()
        os.write(master, START)
        received = b""
        deadline = sent + timeout
        while b"\n" not in received:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise SystemExit(f"no reply within {timeout} s; log: {self.log_tail()}")
            readable, _, _ = select.select([master], [], [], remaining)
            if readable:
                received += os.read(master, 4096)
        return time.monotonic() - sent, received.split(b"\n")[0].decode(errors="replace")

    def log_tail(self):
        with open(os.path.join(self.work, "daemon.log"), "rb") as log:
            return log.read()[-2000:].decode(errors="replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        for master in self.masters:
            os.close(master)
        self.notify.close()
        subprocess.run(["rm", "-rf", self.work])


def idle(args):
    daemon = Daemon(args, args.devices, watchdog_usec=args.watchdog_sec * 1_000_000)
    try:
        daemon.wait_ready()
        # Every device answers once, so each is really open and its session restored before idling.
        for master in daemon.masters:
            daemon.round_trip(master)
        daemon.take_notifications(args.settle)
        pid = daemon.process.pid
        counter = SwitchCounter(pid)
        pings_before = daemon.pings
        started = time.monotonic()
        while time.monotonic() - started < args.seconds:
            daemon.take_notifications(min(0.2, args.seconds - (time.monotonic() - started)))
            counter.sample()
        elapsed = time.monotonic() - started
        threads = len(os.listdir(f"/proc/{pid}/task"))
        fds = len(os.listdir(f"/proc/{pid}/fd"))
        per_thread = {}
        for tid in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{tid}/comm") as comm:
                    name = comm.read().strip()
                per_thread[name] = per_thread.get(name, 0) + 1
            except FileNotFoundError:
                pass
        print(json.dumps({
            "devices": args.devices, "seconds": round(elapsed, 2),
            "wakeups_per_second": round(counter.total() / elapsed, 3),
            "threads": threads, "threads_during": len(counter.threads_seen), "switches_by_thread": counter.by_thread_name(), "thread_names": per_thread, "fds": fds,
            "watchdog_pings": daemon.pings - pings_before, "watchdog_sec": args.watchdog_sec,
            "alive": daemon.process.poll() is None,
        }))
    finally:
        daemon.stop()


def drop_caches():
    os.sync()
    with open("/proc/sys/vm/drop_caches", "w") as control:
        control.write("3\n")


def startup(args):
    if args.drop_caches:
        drop_caches()
    daemon = Daemon(args, 1)
    try:
        ready = daemon.wait_ready()
        first, reply = daemon.round_trip(daemon.masters[0])
        print(json.dumps({"exec_to_ready": round(ready, 4), "ready_to_first_reply": round(first, 4),
                          "first_reply": reply, "cold": args.drop_caches}))
    finally:
        daemon.stop()


def seed(args):
    """Adds N ended workouts (and a share for every tenth) to the database the daemon created, in its schema."""
    database = sqlite3.connect(os.path.join(args.state_dir, "workoutd.sqlite"))
    base = time.time() - args.workouts * 60
    with database:
        first = database.execute("SELECT COALESCE(MAX(id), 0) FROM workout").fetchone()[0] + 1
        database.executemany(
            "INSERT INTO workout (id, device, location, date, intensityLevel, startedAt, endedAt, startCommandID, endCommandID)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            ((first + n, f"/dev/pts/{n % 8}", f"Gym {n % 97}", base + n * 60, 1 + n % 10, base + n * 60,
              base + n * 60 + 45, f"s{n}", f"e{n}") for n in range(args.workouts)))
        share = database.execute("SELECT COALESCE(MAX(id), 0) FROM share").fetchone()[0] + 1
        database.executemany(
            "INSERT INTO share (id, workoutID, device, service, queuedAt, status, attempts, lastError, deliveredAt, nextAttemptAt, commandID)"
            " VALUES (?, ?, ?, 'twitter', ?, 'delivered', 1, NULL, ?, ?, ?)",
            ((share + k, first + n, f"/dev/pts/{n % 8}", base + n * 60 + 50, base + n * 60 + 51, base + n * 60 + 50, f"h{n}")
             for k, n in enumerate(range(0, args.workouts, 10))))
    database.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    count = database.execute("SELECT COUNT(*) FROM workout").fetchone()[0]
    database.close()
    size = os.path.getsize(os.path.join(args.state_dir, "workoutd.sqlite"))
    print(json.dumps({"workouts": count, "bytes": size}))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mode", choices=["idle", "startup", "seed"])
    parser.add_argument("--workoutd")
    parser.add_argument("--config")
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--devices", type=int, default=1)
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--settle", type=float, default=3)
    parser.add_argument("--watchdog-sec", type=int, default=10)
    parser.add_argument("--drop-caches", action="store_true")
    parser.add_argument("--workouts", type=int, default=100_000)
    args = parser.parse_args()
    {"idle": idle, "startup": startup, "seed": seed}[args.mode](args)


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Many busy devices at once: one workoutd serving N ptys beside N C echoes, one per pty; measured from outside.

  many_devices.py --workoutd BIN --config FILE --echo BIN --state-dir DIR [--peer BIN]
                  [--devices 1,2,4,...,64] [--seconds S] [--warm-up S] [--window LINES]

For each device count, first one workoutd (in-memory store) started with one --device per pty, then one echo process per
pty, then with --peer one peer process per pty (workoutd's session behind an epoll loop of its own, SessionBehindEpoll:
the protocol without NIO, served as the echoes are): every device streams pipelined (up to --window commands
outstanding, the next ones written as replies come back) and the replies of all devices together are counted over the
measured seconds. At the largest count the run goes on with the busy-device round trip: one device sends one command at
a time (a process of its own, so the driver's loop over the others does not delay it) while every other device keeps
streaming.

The load is the pty bench's command mix (start_workout / end_workout / share_workout cycles, ids alternating
between integers and strings, each device its own ids), built before timing. A device's block is 3,000 commands
and is sent again from its start when used up: by then its ids are older than the 1,024 a device remembers, so none
is answered as a replay. The timed loop counts newlines only; an `"error"` in any reply, a sample of parsed
replies that is not `"ok"`, or a device whose every command was not answered when it stops fails the probe.

Prints one JSON object: per count the aggregate replies per second, the server's CPU (daemon, every echo or peer), the
driver's own CPU and every CPU's busy time (the kernel's pty work among it), each in percent of one core; for the
busy device its p50 and p99 round trip in microseconds.
"""
import argparse
import json
import os
import resource
import select
import signal
import subprocess
import sys
import time
import tty

LOCATIONS = ["Gary's Gym", "Riverside Park", "Pool \u2014 lane 4", "Home", 'Track "B"']
SERVICES = ["facebook", "instagram", "twitter"]
CYCLES = 1000
TICKS = os.sysconf("SC_CLK_TCK")


def block(device):
    """A device's commands as one byte string and each line's start offset (one more: the end)."""
    lines = []
    for cycle in range(CYCLES):
        date = time.strftime("%Y-%m-%d %H:%M:%S +0000", time.gmtime(1_584_387_913 + cycle * 3600))
        commands = [
            {"command_type": "start_workout", "date": date, "intensityLevel": cycle % 10 + 1,
             "location": LOCATIONS[cycle % len(LOCATIONS)]},
            {"command_type": "end_workout"},
            {"command_type": "share_workout", "service": SERVICES[cycle % len(SERVICES)]},
        ]
        for offset, command in enumerate(commands):
            n = cycle * 3 + offset + 1
            command["id"] = n if n % 2 == 0 else f"d{device}-{n}"
            lines.append(json.dumps(command, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))
    return b"".join(lines), offsets


class Device:
    """One pty master streaming its block: `issued` lines handed to the pty (or waiting in `pending`)."""

    def __init__(self, fd, data):
        self.fd = fd
        self.bytes, self.offsets = data
        self.lines = len(self.offsets) - 1
        self.next = 0
        self.issued = 0
        self.replies = 0
        self.errors = 0
        self.pending = b""
        self.previous = self.last = b""

    def issue(self, count):
        chunks = []
        while count > 0:
            take = min(count, self.lines - self.next)
            chunks.append(self.bytes[self.offsets[self.next]:self.offsets[self.next + take]])
            self.next = (self.next + take) % self.lines
            self.issued += take
            count -= take
        self.pending += b"".join(chunks)

    def flush(self):
        """Writes what the pty takes; True when something is left."""
        if self.pending:
            try:
                n = os.write(self.fd, self.pending)
                self.pending = self.pending[n:]
            except BlockingIOError:
                pass
        return bool(self.pending)

    def read(self):
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return 0
        n = data.count(b"\n")
        self.replies += n
        self.errors += data.count(b'"error"')
        self.previous, self.last = self.last, data
        return n

    def sample(self):
        """The complete reply lines of the last two reads, parsed."""
        lines = (self.previous + self.last).split(b"\n")[1:-1]
        return [json.loads(line) for line in lines if line]


def cpu_ticks(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/stat") as f:
            fields = f.read().rpartition(")")[2].split()
        total += int(fields[11]) + int(fields[12])
    return total


def machine_ticks():
    """Busy clock ticks of every CPU (/proc/stat): also the kernel's pty work, which runs in kworkers."""
    with open("/proc/stat") as f:
        fields = [int(n) for n in f.readline().split()[1:]]
    return sum(fields) - fields[3] - fields[4]


def driver_seconds():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def wait_served(fds, what):
    """One command on every device until each has answered: the server has opened them all."""
    waiting = set(fds)
    deadline = time.monotonic() + 60
    while waiting:
        for fd in waiting:
            try:
                os.write(fd, b'{"command_type":"end_workout","id":"ready"}\n')
            except OSError:
                pass
        until = time.monotonic() + 0.5
        while waiting and time.monotonic() < until:
            r, _, _ = select.select(list(waiting), [], [], 0.1)
            for fd in r:
                try:
                    if b"\n" in os.read(fd, 4096):
                        waiting.discard(fd)
                except OSError:
                    pass
        if time.monotonic() > deadline:
            raise SystemExit(f"{what}: {len(waiting)} devices not served within 60 s")
    time.sleep(0.3)
    for fd in fds:
        try:
            while os.read(fd, 65536):
                pass
        except (BlockingIOError, OSError):
            pass


def single_flight(device, start, warm_up, seconds, out):
    """The busy device, in a child: one command, its reply, the next; round trips after the warm-up."""
    latencies, errors = [], 0
    measure_from, end = start + warm_up, start + warm_up + seconds
    os.set_blocking(device.fd, True)
    while True:
        t0 = time.perf_counter()
        if t0 >= end:
            break
        line = device.bytes[device.offsets[device.next]:device.offsets[device.next + 1]]
        device.next = (device.next + 1) % device.lines
        os.write(device.fd, line)
        reply = b""
        while not reply.endswith(b"\n"):
            r, _, _ = select.select([device.fd], [], [], 30)
            if not r:
                errors += 1
                break
            reply += os.read(device.fd, 4096)
        t1 = time.perf_counter()
        if t0 >= measure_from:
            latencies.append((t1 - t0) * 1e6)
        if b'"ok"' not in reply:
            errors += 1
    latencies.sort()
    summary = {"commands": len(latencies), "errors": errors}
    if latencies:
        summary.update(p50_us=round(latencies[len(latencies) // 2], 1),
                       p99_us=round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 1),
                       max_us=round(latencies[-1], 1))
    os.write(out, json.dumps(summary).encode())


def stream(devices, pids, warm_up, seconds, window, busy=None):
    """Every device pipelined for warm_up + seconds; the replies and CPU of the measured seconds."""
    poller = select.poll()
    by_fd = {d.fd: d for d in devices}
    child = None
    start = time.perf_counter()
    if busy is not None:
        reader, writer = os.pipe()
        child = os.fork()
        if child == 0:
            try:
                os.close(reader)
                single_flight(busy, start, warm_up, seconds, writer)
            finally:
                os._exit(0)
        os.close(writer)
    for d in devices:
        d.issue(window)
        poller.register(d.fd, select.POLLIN | (select.POLLOUT if d.flush() else 0))
    measure_from, end = start + warm_up, start + warm_up + seconds
    counted = None
    while True:
        now = time.perf_counter()
        if counted is None and now >= measure_from:
            counted = (now, sum(d.replies for d in devices), cpu_ticks(pids), driver_seconds(), machine_ticks())
        if now >= end:
            break
        for fd, event in poller.poll(50):
            d = by_fd[fd]
            if event & select.POLLIN:
                n = d.read()
                if n:
                    d.issue(n)
            if event & (select.POLLIN | select.POLLOUT):
                poller.modify(fd, select.POLLIN | (select.POLLOUT if d.flush() else 0))
            if event & (select.POLLERR | select.POLLHUP | select.POLLNVAL) and not event & select.POLLIN:
                raise SystemExit(f"device {fd}: the server closed it")
    t1, replies1, ticks1, driver1, machine1 = (now, sum(d.replies for d in devices), cpu_ticks(pids),
                                                driver_seconds(), machine_ticks())
    t0, replies0, ticks0, driver0, machine0 = counted
    figures = {
        "replies": replies1 - replies0, "seconds": round(t1 - t0, 3),
        "aggregate_per_second": round((replies1 - replies0) / (t1 - t0)),
        "server_cpu_percent": round((ticks1 - ticks0) / TICKS / (t1 - t0) * 100, 1),
        "driver_cpu_percent": round((driver1 - driver0) / (t1 - t0) * 100, 1),
        "machine_cpu_percent": round((machine1 - machine0) / TICKS / (t1 - t0) * 100, 1),
    }
    # Each device finishes its cycle, then every command it wrote must be answered.
    for d in devices:
        d.issue((3 - d.next % 3) % 3)
        while d.flush():
            select.select([], [d.fd], [], 1)
    deadline = time.monotonic() + 30
    while any(d.replies < d.issued for d in devices):
        if time.monotonic() > deadline:
            raise SystemExit(f"{sum(d.issued - d.replies for d in devices)} commands not answered within 30 s")
        for fd, event in poller.poll(100):
            by_fd[fd].read()
    for d in devices:
        poller.unregister(d.fd)
        if d.errors or any(reply.get("status") != "ok" for reply in d.sample()):
            raise SystemExit(f"device {d.fd}: replies that are not ok, e.g. {d.last[-300:]!r}")
    if child is not None:
        os.waitpid(child, 0)
        with os.fdopen(reader, "rb") as f:
            figures["busy"] = json.loads(f.read())
        if figures["busy"]["errors"] or not figures["busy"]["commands"]:
            raise SystemExit(f"busy device: {figures['busy']}")
    return figures


def run(kind, count, args, blocks):
    ptys = [os.openpty() for _ in range(count)]
    for master, _ in ptys:
        tty.setraw(master)
        os.set_blocking(master, False)
    names = [os.ttyname(slave) for _, slave in ptys]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKOUTD_")}
    log = open(os.path.join(args.state_dir, f"{kind}-{count}.log"), "wb")
    if kind == "workoutd":
        argv = [args.workoutd, "serve", "--config", args.config, "--in-memory", "--control-socket", "none",
                "--state-dir", os.path.join(args.state_dir, f"state-{count}")]
        for name in names:
            argv += ["--device", name]
        servers = [subprocess.Popen(argv, env=env, stdout=log, stderr=log)]
    else:
        program = args.echo if kind == "echo" else args.peer
        servers = [subprocess.Popen([program, name], stdout=log, stderr=log) for name in names]
    try:
        fds = [master for master, _ in ptys]
        wait_served(fds, kind)
        devices = [Device(fd, blocks[i]) for i, fd in enumerate(fds)]
        pids = [s.pid for s in servers]
        figures = stream(devices, pids, args.warm_up, args.seconds, args.window)
        if count == max(args.devices) and count > 1:
            figures["busy"] = stream(devices[1:], pids, args.warm_up, args.seconds, args.window, busy=devices[0])["busy"]
        for s in servers:
            if s.poll() is not None:
                raise SystemExit(f"{kind}: a server exited with {s.returncode} during the run")
        return figures
    finally:
        for s in servers:
            s.send_signal(signal.SIGTERM)
        for s in servers:
            try:
                s.wait(15)
            except subprocess.TimeoutExpired:
                s.kill()
                s.wait()
        log.close()
        for master, slave in ptys:
            os.close(master)
            os.close(slave)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workoutd", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--echo", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--peer")
    parser.add_argument("--devices", type=lambda s: [int(n) for n in s.split(",")], default=[1, 2, 4, 8, 16, 32, 64])
    parser.add_argument("--seconds", type=float, default=4)
    parser.add_argument("--warm-up", type=float, default=1)
    parser.add_argument("--window", type=int, default=32)
    args = parser.parse_args()
    os.makedirs(args.state_dir, exist_ok=True)

    blocks = [block(i) for i in range(max(args.devices))]
    counts = []
    for count in args.devices:
        row = {"devices": count}
        for kind in ("workoutd", "echo") + (("peer",) if args.peer else ()):
            row[kind] = run(kind, count, args, blocks)
            print(f"many-devices: {count} devices, {kind}: {row[kind]}", file=sys.stderr)
        row["ratio"] = round(row["workoutd"]["aggregate_per_second"] / row["echo"]["aggregate_per_second"], 3)
        if args.peer:
            row["peer_ratio"] = round(row["peer"]["aggregate_per_second"] / row["echo"]["aggregate_per_second"], 3)
        counts.append(row)
    print(json.dumps({"seconds": args.seconds, "warm_up": args.warm_up, "window": args.window,
                      "cpus": os.cpu_count(), "counts": counts}))


if __name__ == "__main__":
    sys.exit(main())

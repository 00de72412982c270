#!/usr/bin/env python3
"""Several devices flood workoutd at full rate beside a quiet one; measured from outside.

  flood_probe.py --workoutd BIN --config FILE --state-dir DIR [--flooders N] [--seconds S]

Each flooder writes start/end pairs as fast as its pty takes them (locations of 250 characters and 1,000
bytes, ids of 110 bytes: the most the per-field limits allow) and reads every reply; the quiet device sends
one command at a time and times each round trip. /proc/PID/status is sampled every 50 ms for VmRSS and
Threads; VmHWM at the end is the peak. Prints one JSON object: what systemd's MemoryMax= and TasksMax=
must leave room for (docs/systemd.md, "Memory and task limits") and how prompt the quiet device stayed.
"""
import argparse
import json
import os
import select
import signal
import subprocess
import sys
import time
import tty

LOCATION = "\U0001D11E" * 250


def status(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields[key] = value.split()
    return int(fields["VmRSS"][0]), int(fields["VmHWM"][0]), int(fields["Threads"][0])


def flood_lines(device, start, count):
    out = []
    for n in range(start, start + count):
        ident = f"{device}-{n}-" + "x" * 100
        if n % 2 == 0:
            out.append(json.dumps({"command_type": "start_workout", "id": ident, "location": LOCATION,
                                   "date": "2020-03-16 19:45:13 +0000", "intensityLevel": 5}, ensure_ascii=False))
        else:
            out.append(json.dumps({"command_type": "end_workout", "id": ident}))
    return ("\n".join(out) + "\n").encode()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--workoutd", required=True)
    parser.add_argument("--config", required=True)
    parser.add_argument("--state-dir", required=True)
    parser.add_argument("--flooders", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=20)
    args = parser.parse_args()

    ptys = [os.openpty() for _ in range(args.flooders + 1)]
    for master, slave in ptys:
        tty.setraw(master)
        os.set_blocking(master, False)
    argv = [args.workoutd, "--config", args.config, "--state-dir", args.state_dir, "--control-socket", "none"]
    for _, slave in ptys:
        argv += ["--device", os.ttyname(slave)]
    env = {k: v for k, v in os.environ.items() if not k.startswith("WORKOUTD_")}
    daemon = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        quiet = ptys[-1][0]
        flooders = [m for m, _ in ptys[:-1]]

        def round_trip(line):
            os.write(quiet, line)
            buf = b""
            deadline = time.monotonic() + 30
            while b"\n" not in buf:
                r, _, _ = select.select([quiet], [], [], max(0, deadline - time.monotonic()))
                if not r:
                    raise SystemExit("quiet device: no reply within 30 s")
                buf += os.read(quiet, 4096)
            return json.loads(buf.split(b"\n")[0])

        # Served: the quiet device and every flooder answer once.
        for m in flooders + [quiet]:
            deadline = time.monotonic() + 30
            while True:
                try:
                    os.write(m, b'{"command_type":"end_workout"}\n')
                    r, _, _ = select.select([m], [], [], 0.5)
                    if r and b"\n" in os.read(m, 4096):
                        break
                except OSError:
                    pass
                if time.monotonic() > deadline:
                    raise SystemExit("a device was not served within 30 s")
        time.sleep(0.5)
        for m in flooders + [quiet]:
            try:
                while os.read(m, 65536):
                    pass
            except BlockingIOError:
                pass
        rss0, _, threads0 = status(daemon.pid)

        pending = {m: b"" for m in flooders}
        sent = {m: 0 for m in flooders}
        replies = {m: 0 for m in flooders}
        partial = {m: b"" for m in flooders}
        codes = {}
        max_rss, max_threads = rss0, threads0
        latencies = []
        quiet_errors = 0
        quiet_id = 0
        next_sample = 0.0
        next_quiet = 0.0
        end = time.monotonic() + args.seconds
        while time.monotonic() < end:
            for m in flooders:
                if not pending[m]:
                    pending[m] = flood_lines(f"f{m}", sent[m], 50)
                    sent[m] += 50
            r, w, _ = select.select(flooders, [m for m in flooders if pending[m]], [], 0.01)
            for m in w:
                try:
                    n = os.write(m, pending[m])
                    pending[m] = pending[m][n:]
                except BlockingIOError:
                    pass
            for m in r:
                try:
                    data = partial[m] + os.read(m, 65536)
                except BlockingIOError:
                    continue
                *lines, partial[m] = data.split(b"\n")
                for line in lines:
                    replies[m] += 1
                    reply = json.loads(line)
                    code = reply.get("error", {}).get("code", "ok")
                    codes[code] = codes.get(code, 0) + 1
            now = time.monotonic()
            if now >= next_sample:
                rss, _, threads = status(daemon.pid)
                max_rss, max_threads = max(max_rss, rss), max(max_threads, threads)
                next_sample = now + 0.05
            if now >= next_quiet:
                # The quiet device: one command at a time, ten a second, timed from write to reply.
                quiet_id += 1
                line = (b'{"command_type":"start_workout","id":%d,"location":"Quiet","date":"2020-03-16 19:45:13 +0000","intensityLevel":3}\n'
                        if quiet_id % 2 else b'{"command_type":"end_workout","id":%d}\n') % quiet_id
                t0 = time.monotonic()
                reply = round_trip(line)
                latencies.append((time.monotonic() - t0) * 1000)
                if reply.get("status") != "ok" or reply.get("id") != quiet_id:
                    quiet_errors += 1
                next_quiet = now + 0.1
        _, hwm, threads = status(daemon.pid)
        latencies.sort()
        db = os.path.join(args.state_dir, "workoutd.sqlite")
        size = sum(os.path.getsize(p) for p in (db, db + "-wal") if os.path.exists(p))
        print(json.dumps({
            "flooders": args.flooders, "seconds": args.seconds,
            "flood_lines_answered": sum(replies.values()), "flood_replies": codes,
            "rss_kib_before": rss0, "rss_kib_max_sampled": max_rss, "rss_kib_peak_vmhwm": hwm,
            "threads_before": threads0, "threads_max": max(max_threads, threads),
            "database_bytes": size,
            "quiet_commands": len(latencies), "quiet_errors": quiet_errors,
            "quiet_ms_p50": round(latencies[len(latencies) // 2], 2) if latencies else None,
            "quiet_ms_p99": round(latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))], 2) if latencies else None,
            "quiet_ms_max": round(latencies[-1], 2) if latencies else None,
        }))
    finally:
        daemon.send_signal(signal.SIGTERM)
        try:
            daemon.wait(15)
        except subprocess.TimeoutExpired:
            daemon.kill()


if __name__ == "__main__":
    sys.exit(main())

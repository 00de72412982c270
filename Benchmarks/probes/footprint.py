#!/usr/bin/env python3
"""Resident memory of a daemon serving one pty: starts COMMAND (with {device} and {state} substituted) on a
fresh pty and state directory, and prints as JSON:

- idle: VmRSS and its anonymous / file-backed parts (/proc/PID/status) SETTLE seconds after start, threads, fds;
- loaded: the same right after LOAD durable commands (start/end, in batches of 1000 in flight);
- after: the same REST seconds after the load.

Used by Benchmarks/parts/footprint.sh.

Usage: Benchmarks/probes/footprint.py COMMAND [LOAD] [SETTLE] [REST]
"""
import json
import os
import sys
import time

from pty_daemon import PtyDaemon, durable_commands


def memory(pid):
    fields = {}
    with open(f"/proc/{pid}/status") as status:
        for row in status:
            key, _, value = row.partition(":")
            if key in ("VmRSS", "RssAnon", "RssFile", "RssShmem", "Threads"):
                fields[key] = int(value.split()[0])
    return {
        "rss_kib": fields["VmRSS"], "anon_kib": fields["RssAnon"], "file_kib": fields["RssFile"] + fields.get("RssShmem", 0),
        "threads": fields["Threads"], "fds": len(os.listdir(f"/proc/{pid}/fd")),
    }


def main():
    template = sys.argv[1]
    load = int(sys.argv[2]) if len(sys.argv) > 2 else 100_000
    settle = float(sys.argv[3]) if len(sys.argv) > 3 else 5
    rest = float(sys.argv[4]) if len(sys.argv) > 4 else 60
    daemon = PtyDaemon(template, "footprint-")
    try:
        time.sleep(settle)
        result = {"idle": memory(daemon.pid)}
        for _ in range(load // 1000):
            daemon.exchange(durable_commands(1000))
        result["loaded"] = memory(daemon.pid)
        time.sleep(rest)
        result["after"] = memory(daemon.pid)
        print(json.dumps(result))
    finally:
        daemon.stop()


if __name__ == "__main__":
    main()

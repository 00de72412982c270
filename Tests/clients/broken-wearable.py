#!/usr/bin/env python3
"""A wearable in Python that follows the protocol, or breaks exactly one conformance rule.

Sends start_workout, end_workout and share_workout one at a time, as the reference example does: a 1 s
timeout, the same line and id on every resend, up to 5 sends, retry_after_ms honoured, 1 s after
storage_unavailable, replies in LF or CRLF. BREAKS picks what goes wrong:

  none          nothing: passes every rule
  r1            the share_workout line is not JSON (a trailing comma)
  r2            one id for all three commands
  r3            a resend is the same id but other bytes (spaces after ',' and ':')
  r3-fresh-id   a resend after a timeout carries a fresh id (the duplicate workout of docs/wearables.md)
  r4            after rate_limited it resends after 50 ms, whatever retry_after_ms says
  r5            after storage_unavailable it resends at once
  r6            after a timeout it sends the next command first and resends the unanswered one at the end

Usage: Tests/clients/broken-wearable.py BREAKS TTY
Exits 0 when every command was answered ok, 1 otherwise, 64 on usage errors.
"""
import json
import os
import random
import select
import sys
import time
import tty

TIMEOUT = 1.0
MAX_SENDS = 5
BREAKS = ("none", "r1", "r2", "r3", "r3-fresh-id", "r4", "r5", "r6")


class Wearable:
    def __init__(self, fd, breaks):
        self.fd = fd
        self.breaks = breaks
        self.pending = b""
        self.answers = {}  # id -> the last final reply with that id

    def line(self, command, ident, resend=False):
        body = dict(command, id=ident)
        separators = (", ", ": ") if resend and self.breaks == "r3" else (",", ":")
        text = json.dumps(body, separators=separators)
        if self.breaks == "r1" and command["command_type"] == "share_workout":
            text = text[:-1] + ",}"
        return text.encode() + b"\n"

    def replies(self, until):
        """Reply objects read before `until` (monotonic seconds); stops at the first one."""
        while True:
            if b"\n" in self.pending:
                raw, self.pending = self.pending.split(b"\n", 1)
                raw = raw.rstrip(b"\r")
                if raw.strip():
                    print("<", raw.decode(errors="replace"), flush=True)
                    return json.loads(raw)
                continue
            wait = until - time.monotonic()
            if wait <= 0:
                return None
            ready, _, _ = select.select([self.fd], [], [], wait)
            if ready:
                data = os.read(self.fd, 4096)
                if not data:
                    return None
                self.pending += data

    def send(self, data):
        print(">", data.decode().rstrip("\n"), flush=True)
        os.write(self.fd, data)

    def run(self, command, ident, move_on=False):
        """Sends `command` until answered; returns its final reply, None when given up (or left for later)."""
        data = self.line(command, ident)
        sends = 0
        while sends < MAX_SENDS:
            self.send(data)
            sends += 1
            deadline = time.monotonic() + TIMEOUT
            resend_at = None
            while resend_at is None:
                reply = self.replies(deadline)
                if reply is None:
                    if move_on:
                        return None
                    if self.breaks == "r3-fresh-id":
                        ident = ident + 1000
                        data = self.line(command, ident)
                    resend_at = time.monotonic()
                    break
                rid = reply.get("id")
                if rid is not None and rid != ident:
                    self.answers[rid] = reply
                    continue
                code = (reply.get("error") or {}).get("code")
                if code == "rate_limited":
                    wait = 0.05 if self.breaks == "r4" else reply["error"]["retry_after_ms"] / 1000
                    resend_at = time.monotonic() + wait
                elif code == "storage_unavailable":
                    resend_at = time.monotonic() + (0 if self.breaks == "r5" else TIMEOUT)
                else:
                    self.answers[ident] = reply
                    return reply
            time.sleep(max(0, resend_at - time.monotonic()))
            data = self.line(command, ident, resend=True)
        return None


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in BREAKS:
        print(__doc__, file=sys.stderr)
        return 64
    breaks, path = sys.argv[1:]
    fd = os.open(path, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd)
    wearable = Wearable(fd, breaks)
    first = random.randrange(1, 1 << 40)
    commands = [
        ({"command_type": "start_workout", "location": "Gary's Gym", "date": "2020-03-16 19:45:13 +0000",
          "intensityLevel": 5}, first),
        ({"command_type": "end_workout"}, first if breaks == "r2" else first + 1),
        ({"command_type": "share_workout", "service": "twitter"}, first if breaks == "r2" else first + 2),
    ]
    left = []
    ok = True
    for command, ident in commands:
        reply = wearable.run(command, ident, move_on=breaks == "r6")
        if reply is None and breaks == "r6":
            left.append((command, ident))
        elif reply is None or reply.get("status") != "ok":
            ok = False
            break
    for command, ident in left:
        reply = wearable.answers.get(ident) or wearable.run(command, ident)
        ok = ok and reply is not None and reply.get("status") == "ok"
    os.close(fd)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())

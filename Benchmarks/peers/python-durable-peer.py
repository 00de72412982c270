#!/usr/bin/env python3
"""The Python durable peer: the reference workoutd's storage figures are measured against (`make bench`, part
`sdcard`). A plain daemon on one tty, standard `sqlite3` module, WAL with synchronous=FULL (every commit fsyncs
the WAL before the reply goes out), one transaction per read batch, one row per workout. It answers
start_workout / end_workout / share_workout with workoutd's reply lines (docs/protocol.md "Replies"); anything else gets
an error reply. Single-threaded, no timers: it sleeps in read(2) while nothing arrives.

Usage: Benchmarks/peers/python-durable-peer.py DEVICE STATE_DIR
"""
import json
import os
import sqlite3
import sys
import time
import termios
import tty


def reply(command, fields):
    """An ok reply: status, command_type, the command's id when it had one, then the command's fields."""
    out = {"status": "ok", "command_type": command["command_type"]}
    if "id" in command:
        out["id"] = command["id"]
    out.update(fields)
    return out


def error(command, code, message):
    out = {"status": "error"}
    if isinstance(command, dict) and "id" in command:
        out["id"] = command["id"]
    out["error"] = {"code": code, "message": message}
    return out


def run(db, line):
    try:
        command = json.loads(line)
    except ValueError:
        return error(None, "malformed_json", "The line is not a JSON object.")
    if not isinstance(command, dict):
        return error(None, "malformed_json", "The line is not a JSON object.")
    kind = command.get("command_type")
    active = db.execute("SELECT id, started_at FROM workout WHERE ended_at IS NULL").fetchone()
    if kind == "start_workout":
        if active:
            return error(command, "workout_already_active", "A workout is already active on this device.")
        cursor = db.execute(
            "INSERT INTO workout (location, date, intensity, started_at) VALUES (?, ?, ?, ?)",
            (str(command.get("location", "")), str(command.get("date", "")), int(command.get("intensityLevel", 1)), time.time()))
        return reply(command, {"workout_id": cursor.lastrowid})
    if kind == "end_workout":
        if not active:
            return error(command, "no_active_workout", "No workout is active on this device; start one first.")
        now = time.time()
        db.execute("UPDATE workout SET ended_at = ? WHERE id = ?", (now, active[0]))
        return reply(command, {"workout_id": active[0], "duration_seconds": round(now - active[1], 2)})
    if kind == "share_workout":
        last = db.execute("SELECT MAX(id) FROM workout WHERE ended_at IS NOT NULL").fetchone()[0]
        if last is None:
            return error(command, "nothing_to_share", "No ended workout to share.")
        cursor = db.execute("INSERT INTO share (workout_id, service) VALUES (?, ?)", (last, str(command.get("service", ""))))
        return reply(command, {"workout_id": last, "service": command.get("service", ""), "share_id": cursor.lastrowid})
    return error(command, "unknown_command", "'command_type' must be one of start_workout, end_workout, share_workout.")


def main():
    device, state = sys.argv[1], sys.argv[2]
    os.makedirs(state, exist_ok=True)
    db = sqlite3.connect(os.path.join(state, "peer.sqlite"), isolation_level=None)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE IF NOT EXISTS workout (id INTEGER PRIMARY KEY, location TEXT NOT NULL, date TEXT NOT NULL,"
               " intensity INTEGER NOT NULL, started_at REAL NOT NULL, ended_at REAL)")
    db.execute("CREATE TABLE IF NOT EXISTS share (id INTEGER PRIMARY KEY, workout_id INTEGER NOT NULL, service TEXT NOT NULL)")
    fd = os.open(device, os.O_RDWR | os.O_NOCTTY)
    tty.setraw(fd, termios.TCSANOW)  # keep what arrived before the tty was set up
    pending = b""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:  # the far end closed (EIO on a pty)
            return
        if not data:
            return
        *lines, pending = (pending + data).split(b"\n")
        lines = [line for line in lines if line.strip()]
        if not lines:
            continue
        db.execute("BEGIN IMMEDIATE")
        replies = [run(db, line) for line in lines]
        db.execute("COMMIT")
        os.write(fd, b"".join(json.dumps(r, separators=(",", ":")).encode() + b"\n" for r in replies))


if __name__ == "__main__":
    main()

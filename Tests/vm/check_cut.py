#!/usr/bin/env python3
"""Checks one power cut of the VM test: every command the host saw acked before SIGKILL is stored after the
next boot, none twice, and resending every command of the cut with its id creates no duplicate.

Usage: check_cut.py CUT CUT_REPORT RECOVERY_REPORT
CUT_REPORT holds the guest's "SENT id" / "ACK id {reply}" lines as they reached the host until the kill;
RECOVERY_REPORT holds "STORED {workout}" lines (before / after the resend) and "RESENT id {reply}" lines.
"""
import collections
import json
import sys


def complete_lines(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = text.split("\n")
    return lines[:-1]  # the last piece has no newline: cut off by the kill, not a report


def main():
    cut, cut_report, recovery_report = sys.argv[1], sys.argv[2], sys.argv[3]
    prefix = f"k{cut}-"
    acks = {}
    for line in complete_lines(cut_report):
        if line.startswith("ACK "):
            _, command_id, body = line.split(" ", 2)
            acks[command_id] = json.loads(body)
    stored = {"before": [], "after": []}
    pending, resent = [], {}
    for line in complete_lines(recovery_report):
        if line.startswith("STORED "):
            pending.append(json.loads(line[len("STORED "):]))
        elif line.startswith("STORED_END "):
            stored[line.split()[1]] = pending
            pending = []
        elif line.startswith("RESENT "):
            _, command_id, body = line.split(" ", 2)
            resent[command_id] = json.loads(body)

    problems = []
    if not acks:
        problems.append("no acks reached the host before the cut")
    if not stored["after"]:
        problems.append("the recovery boot reported no stored workouts after the resend")

    def by_location(workouts):
        index = collections.defaultdict(list)
        for workout in workouts:
            location = str(workout.get("location", ""))
            if location.startswith(prefix):
                index[location].append(workout)
        return index

    before = by_location(stored["before"])
    for moment in ("before", "after"):
        for location, workouts in by_location(stored[moment]).items():
            if len(workouts) > 1:
                problems.append(f"{moment} the resend: {location} stored {len(workouts)} times")

    acked_ok = 0
    for command_id, reply in acks.items():
        if not command_id.startswith(prefix) or reply.get("status") != "ok":
            if command_id.startswith(prefix):
                problems.append(f"{command_id} acked with an error: {reply}")
            continue
        acked_ok += 1
        kind, n = command_id[len(prefix)], command_id[len(prefix) + 1:]
        matches = before.get(f"{prefix}{n}", [])
        if kind == "s":
            if not matches:
                problems.append(f"acked {command_id} (workout {reply.get('workout_id')}) not stored after the cut")
            elif matches[0].get("id") != reply.get("workout_id"):
                problems.append(f"acked {command_id}: workout {reply.get('workout_id')}, stored {matches[0]}")
        elif kind == "e":
            ended = matches and matches[0].get("endedAt") and matches[0].get("endCommandID", command_id) == command_id
            if not ended:
                problems.append(f"acked {command_id} (end of {reply.get('workout_id')}) not stored: {matches}")
        again = resent.get(command_id)
        if again is None:
            problems.append(f"{command_id} was not resent")
        elif not again.get("replayed") or again.get("workout_id") != reply.get("workout_id"):
            problems.append(f"resent acked {command_id}: expected a replay of {reply}, got {again}")

    after = by_location(stored["after"])
    sent_starts = {command_id[len(prefix) + 1:] for command_id in resent if command_id.startswith(prefix + "s")}
    for n in sorted(sent_starts, key=int):
        if len(after.get(f"{prefix}{n}", [])) != 1:
            problems.append(f"after the resend {prefix}{n} is stored {len(after.get(f'{prefix}{n}', []))} times")

    replayed = sum(1 for reply in resent.values() if reply.get("replayed"))
    print(f"check_cut {cut}: {acked_ok} acked before the kill, {len(before)} of the cut's workouts stored, "
          f"{len(resent)} resent ({replayed} replayed), {len(after)} workouts after the resend")
    for problem in problems[:40]:
        print(f"  FAIL {problem}")
    if len(problems) > 40:
        print(f"  ... and {len(problems) - 40} more")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())

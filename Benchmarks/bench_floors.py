#!/usr/bin/env python3
"""Benchmark floors as data: Benchmarks/Thresholds/PART.json, read by the parts and by `make bench-check`.

A thresholds file holds a part's floors:

    {"part": "idle", "floors": [
        {"metric": "wakeups_per_second_1_device", "max": 1.5, "description": "...", "origin": "..."},
        {"any_of": [{"metric": "...", "max": 1.1}, {"metric": "...", "max": 0.2}], "description": "..."}]}

Each floor bounds one metric with "max" (<=), "min" (>=) or "below" (<); "any_of" is met when one of its floors is.
A part measures and writes its metrics to Benchmarks/Results/PART.json ({"metrics": {name: value}}).

    bench_floors.py value PART METRIC [max|min|below]   the bound, for a part's shell or awk
    bench_floors.py check [PART...]                     every floor against the last results; exits 1 on any miss
    bench_floors.py record PART FILE...                 records the metrics a driver wrote (JSON objects, merged)
    bench_floors.py parts                               the parts that have floors
Environment: BENCH_THRESHOLDS (default Benchmarks/Thresholds), BENCH_RESULTS (default Benchmarks/Results).
"""
import datetime
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
THRESHOLDS = os.environ.get("BENCH_THRESHOLDS", os.path.join(HERE, "Thresholds"))
RESULTS = os.environ.get("BENCH_RESULTS", os.path.join(HERE, "Results"))
SYMBOLS = {"max": "≤", "min": "≥", "below": "<"}


def parts():
    """The parts that have a thresholds file, in name order."""
    return sorted(name[:-5] for name in os.listdir(THRESHOLDS) if name.endswith(".json"))


def load(part):
    with open(os.path.join(THRESHOLDS, part + ".json")) as file:
        return json.load(file)


def _leaves(floor):
    return [leaf for inner in floor["any_of"] for leaf in _leaves(inner)] if "any_of" in floor else [floor]


def bound(part, metric, kind=None):
    """The bound a part's floor sets on `metric` (the first floor that names it)."""
    for floor in load(part)["floors"]:
        for leaf in _leaves(floor):
            if leaf["metric"] == metric:
                kinds = [kind] if kind else [k for k in SYMBOLS if k in leaf]
                for k in kinds:
                    if k in leaf:
                        return leaf[k]
    raise KeyError(f"{part}: no floor on {metric}" + (f" ({kind})" if kind else ""))


def met(floor, metrics):
    """True, False, or None when a metric it needs was not measured."""
    if "any_of" in floor:
        verdicts = [met(inner, metrics) for inner in floor["any_of"]]
        if any(v is True for v in verdicts):
            return True
        return None if any(v is None for v in verdicts) else False
    value = metrics.get(floor["metric"])
    if value is None:
        return None
    return (
        ("max" not in floor or value <= floor["max"])
        and ("min" not in floor or value >= floor["min"])
        and ("below" not in floor or value < floor["below"])
    )


def requirement(floor):
    if "any_of" in floor:
        return " or ".join(requirement(inner) for inner in floor["any_of"])
    return " and ".join(f"{floor['metric']} {SYMBOLS[k]} {floor[k]:g}" for k in SYMBOLS if k in floor)


def verdict(ok):
    return "PASS" if ok else "MISS"


def results(part):
    path = os.path.join(RESULTS, part + ".json")
    if not os.path.exists(path):
        return {}
    with open(path) as file:
        return json.load(file)


def write_results(part, metrics):
    """Records a part's measured metrics, with when and at which commit."""
    root = os.path.dirname(HERE)
    commit = subprocess.run(["git", "-C", root, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    document = {
        "part": part,
        "measured": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "commit": commit.stdout.strip() or "unknown",
        "metrics": metrics,
    }
    os.makedirs(RESULTS, exist_ok=True)
    with open(os.path.join(RESULTS, part + ".json"), "w") as file:
        json.dump(document, file, indent=2, sort_keys=True)
        file.write("\n")


def rows(names):
    """(part, floor, verdict or None, measured text, when) for every floor of the named parts."""
    for part in names:
        recorded = results(part)
        metrics = recorded.get("metrics", {})
        when = f"{recorded['measured']}, {recorded['commit']}" if recorded else "not measured"
        for floor in load(part)["floors"]:
            measured = ", ".join(
                f"{metrics[leaf['metric']]:g}" if leaf["metric"] in metrics else "–" for leaf in _leaves(floor)
            )
            yield part, floor, met(floor, metrics), measured, when


def check(names):
    missed = 0
    for part, floor, ok, measured, when in rows(names):
        state = "MISS" if ok is False else "PASS" if ok else "NOT MEASURED"
        if ok is not True:
            missed += 1
        print(f"{state:12} {part}: {floor.get('description', '')} [{requirement(floor)}] measured {measured} ({when})")
    total = sum(len(load(part)["floors"]) for part in names)
    print(f"bench-check: {total - missed} of {total} floors met" + ("" if not missed else f", {missed} missed or not measured"))
    return 1 if missed else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "value":
        print(bound(argv[1], argv[2], argv[3] if len(argv) > 3 else None))
        return 0
    if argv and argv[0] == "check":
        return check(argv[1:] or parts())
    if len(argv) >= 3 and argv[0] == "record":
        metrics = {}
        for path in argv[2:]:
            with open(path) as file:
                metrics.update(json.load(file))
        write_results(argv[1], metrics)
        return 0
    if argv == ["parts"]:
        print(" ".join(parts()))
        return 0
    print(__doc__, file=sys.stderr)
    return 64


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

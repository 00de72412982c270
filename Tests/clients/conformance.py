#!/usr/bin/env python3
"""`workoutd conformance` grading real wearables on socat pty pairs.

The tool plays the hub on side A of a socat pty pair, the wearable opens side B. Asserts:

- the reference C example (clients/c/build/wearable) passes every rule, exit 0, in text and in JSON;
- the Python wearable that follows the rules (Tests/clients/broken-wearable.py none) passes too;
- each broken Python wearable fails exactly the rule it breaks, exit 1, the report naming that rule;
- usage errors exit 64 and a device that cannot be opened exits 66, each with a message.

Usage: Tests/clients/conformance.py path/to/workoutd path/to/wearable
"""
import json
import os
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
BROKEN = {"r1": "R1", "r2": "R2", "r3": "R3", "r3-fresh-id": "R3", "r4": "R4", "r5": "R5", "r6": "R6"}


def wait_for(predicate, seconds):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def run(workoutd, wearable_command, work, json_report):
    os.makedirs(work)
    pair = subprocess.Popen(["socat", f"pty,raw,echo=0,link={work}/A", f"pty,raw,echo=0,link={work}/B"],
                            stderr=subprocess.DEVNULL)
    tool = wearable = None
    log_path = f"{work}/stderr"
    try:
        assert wait_for(lambda: os.path.exists(f"{work}/A") and os.path.exists(f"{work}/B"), 5), "no socat ptys"
        with open(log_path, "wb") as log:
            arguments = [workoutd, "conformance", "--device", f"{work}/A", "--seconds", "40"]
            tool = subprocess.Popen(arguments + (["--json"] if json_report else []), stdout=subprocess.PIPE,
                                    stderr=log)
            assert wait_for(lambda: b"playing the hub" in open(log_path, "rb").read(), 30), \
                open(log_path, "rb").read()
            wearable = subprocess.Popen(wearable_command + [f"{work}/B"], stdout=subprocess.DEVNULL)
            stdout, _ = tool.communicate(timeout=60)
            status = tool.returncode
            tool = None
            wearable.wait(timeout=30)
            wearable = None
        return status, stdout.decode(), open(log_path, "rb").read().decode(errors="replace")
    finally:
        for process in (tool, wearable):
            if process is not None:
                process.kill()
                process.wait()
        pair.kill()
        pair.wait()


def results(report):
    return {rule["rule"]: rule["result"] for rule in report["rules"]}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 64
    workoutd, reference = (os.path.abspath(path) for path in sys.argv[1:])
    broken = [sys.executable, os.path.join(HERE, "broken-wearable.py")]
    with tempfile.TemporaryDirectory(prefix="conformance.") as work:
        # Usage errors: 64; a device that cannot be opened: 66.
        for arguments, expected, message in (
            (["conformance"], 64, "--device"),
            (["conformance", "--device", "/dev/null", "--seconds", "0"], 64, "--seconds must be from 1"),
            (["conformance", "--device", "/dev/null", "--bogus"], 64, "--bogus"),
            (["conformance", "--device", f"{work}/missing"], 66, "cannot open the device"),
        ):
            done = subprocess.run([workoutd] + arguments, capture_output=True, text=True, timeout=30)
            print(f"workoutd {' '.join(arguments)}: exit {done.returncode}: {done.stderr.strip().splitlines()[0]}")
            assert done.returncode == expected, f"{arguments}: exit {done.returncode}, expected {expected}"
            assert message in done.stderr, f"{arguments}: {done.stderr}"

        status, text, trace = run(workoutd, [reference], f"{work}/reference-text", json_report=False)
        print(f"--- the reference example, text report (exit {status})\n{text}", end="")
        assert status == 0, f"the reference example: exit {status}\n{trace}"
        assert text.endswith("result: PASS (R1-R6)\n"), text

        status, output, trace = run(workoutd, [reference], f"{work}/reference-json", json_report=True)
        report = json.loads(output)
        assert status == 0 and report["result"] == "PASS", f"exit {status}: {output}\n{trace}"
        assert set(results(report).values()) == {"PASS"}, output
        assert all(fault["injected"] for fault in report["faults"]), f"a fault was not reached: {output}"
        print(f"the reference example, --json: {report['result']}, {report['lines']} lines, "
              f"{report['commands']} commands, {report['seconds']} s, ended: {report['ended']}")

        status, output, trace = run(workoutd, broken + ["none"], f"{work}/none", json_report=True)
        report = json.loads(output)
        assert status == 0 and set(results(report).values()) == {"PASS"}, f"exit {status}: {output}\n{trace}"
        print(f"broken-wearable.py none: {report['result']}")

        for breaks, rule in BROKEN.items():
            status, output, trace = run(workoutd, broken + [breaks], f"{work}/{breaks}", json_report=True)
            report = json.loads(output)
            failed = report["failed"]
            detail = next(r["detail"] for r in report["rules"] if r["rule"] == rule)
            print(f"broken-wearable.py {breaks}: exit {status}, failed {failed}: {detail}")
            assert status == 1, f"{breaks}: exit {status}\n{output}\n{trace}"
            assert failed == [rule], f"{breaks}: failed {failed}, expected [{rule}]\n{output}\n{trace}"

        status, text, trace = run(workoutd, broken + ["r3-fresh-id"], f"{work}/r3-text", json_report=False)
        print(f"--- broken-wearable.py r3-fresh-id, text report (exit {status})\n{text}", end="")
        assert status == 1 and "result: FAIL (R3)" in text, text
    print("conformance: ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())

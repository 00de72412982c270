#!/usr/bin/env python3
"""The manuals name every subcommand, option and configuration key, and render without a warning.

Writes workoutd(8), workoutctl(1) and workoutd.yaml(5) with scripts/man-pages.py (what the package installs),
renders each with man -l, and looks in the rendered text for every visible subcommand and option of both
command trees (`--experimental-dump-help`) and every key of the configuration table (`workoutd
configuration-keys`), with its default, whether a reload applies it and its environment variable. Nothing is
listed here by hand: a new subcommand, option or key without its entry in the manual fails this test.

Usage: Tests/shell/man-pages.py BIN_DIR   (the directory holding the built workoutd and workoutctl)
"""

import json
import os
import re
import subprocess
import sys
import tempfile

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def run(*command, **environment):
    env = dict(os.environ, **environment)
    return subprocess.run(command, check=True, capture_output=True, text=True, env=env)


def rendered(page):
    """The page as man shows it, one long line per paragraph, dashes and quotes as typed."""
    result = run("man", "--no-hyphenation", "--no-justification", "-P", "cat", "-l", page, MANWIDTH="1000")
    check(result.stderr.strip() == "", f"{page}: man says {result.stderr.strip()!r}")
    warnings = subprocess.run(["groff", "-man", "-ww", "-z", page], capture_output=True, text=True).stderr
    check(warnings.strip() == "", f"{page}: groff warns {warnings.strip()!r}")
    text = re.sub(r".\x08", "", result.stdout)
    for fancy, plain in {"\u2212": "-", "\u2010": "-", "\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'}.items():
        text = text.replace(fancy, plain)
    return re.sub(r"[ \t]+", " ", text)


def commands(command, path):
    """(path, command) for the tree's visible commands, argument-parser's own `help` left out."""
    yield path, command
    for sub in command.get("subcommands") or []:
        if sub.get("shouldDisplay", True) and sub["commandName"] != "help":
            yield from commands(sub, path + " " + sub["commandName"])


def check_command_page(binary, page):
    tool = json.loads(run(binary, "--experimental-dump-help").stdout)
    text = rendered(page)
    top = tool["command"]["commandName"]
    for path, command in commands(tool["command"], top):
        check(path in text, f"{os.path.basename(page)}: no {path!r}")
        if command.get("abstract"):
            check(command["abstract"].split(".")[0] in text.replace("\n", " "),
                  f"{os.path.basename(page)}: no abstract of {path!r}")
        for argument in command.get("arguments") or []:
            if not argument.get("shouldDisplay", True):
                continue
            builtin = {name["name"] for name in argument.get("names") or []} & {"help", "version"}
            if builtin and path != top:
                continue  # --help and --version: every command takes them, the page lists them once
            for name in argument.get("names") or []:
                spelled = ("--" if name["kind"] == "long" else "-") + name["name"]
                check(spelled in text, f"{os.path.basename(page)}: {path} has no {spelled}")
    return text


def value(written):
    """A flow value as the shipped file and the table write it: a list, a quoted string or a word."""
    written = written.strip()
    if written.startswith("[") and written.endswith("]"):
        return [value(item) for item in written[1:-1].split(",") if item.strip()]
    if len(written) >= 2 and written[0] == written[-1] and written[0] in "\"'":
        return written[1:-1]
    return written


def shipped_values(path):
    """Dotted key -> value of every key Config/workoutd.yaml sets (its simple block layout: sections, flow lists)."""
    values, stack = {}, []
    for line in open(path, encoding="utf-8"):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        body = re.sub(r"\s+#.*$", "", line.strip())
        if body.startswith("- "):
            values.setdefault(".".join(name for _, name in stack), []).append(value(body[2:]))
            continue
        while stack and stack[-1][0] >= indent:
            stack.pop()
        name, _, rest = body.partition(":")
        stack.append((indent, name.strip()))
        if rest.strip():
            values[".".join(n for _, n in stack)] = value(rest)
    return values


def check_shipped_defaults(keys):
    """The table's defaults are the values the shipped configuration file writes out."""
    shipped = shipped_values(os.path.join(REPO, "Config", "workoutd.yaml"))
    compared = 0
    for key in keys:
        for name, written in shipped.items():
            pattern = "^" + re.escape(key["name"]).replace("\\*", "[a-z]+") + "$"
            if not re.match(pattern, name):
                continue
            documented = key["defaultValue"]
            if documented.startswith(("none", "/etc/machine-id", "the host name")):
                continue
            documented = value(documented.split(" (")[0])
            check(documented == written, f"{name}: the manual says {documented!r}, Config/workoutd.yaml {written!r}")
            compared += 1
    check(compared >= 30, f"only {compared} keys of Config/workoutd.yaml compared with the table")


def main():
    bin_dir = sys.argv[1]
    workoutd = os.path.join(bin_dir, "workoutd")
    workoutctl = os.path.join(bin_dir, "workoutctl")
    version = run(workoutd, "--version").stdout.strip()
    check(run(workoutctl, "--version").stdout.strip() == version, "workoutctl --version differs from workoutd's")
    with tempfile.TemporaryDirectory() as out:
        run("python3", os.path.join(REPO, "scripts", "man-pages.py"), out, workoutd, workoutctl, version)
        pages = sorted(os.listdir(out))
        check(pages == ["workoutctl.1", "workoutd.8", "workoutd.yaml.5"], f"pages written: {pages}")

        workoutd_text = check_command_page(workoutd, os.path.join(out, "workoutd.8"))
        check("workoutd.yaml(5)" in workoutd_text, "workoutd.8: no reference to workoutd.yaml(5)")
        check_command_page(workoutctl, os.path.join(out, "workoutctl.1"))

        keys = json.loads(run(workoutd, "configuration-keys").stdout)
        check(len(keys) > 0, "workoutd configuration-keys listed no key")
        text = rendered(os.path.join(out, "workoutd.yaml.5"))
        lines = text.split("\n")
        for key in keys:
            name = key["name"].replace("*", "<service>")
            at = [i for i, line in enumerate(lines) if line.strip() == name]
            check(len(at) == 1, f"workoutd.yaml.5: key {name!r} is not one entry of its own ({len(at)})")
            if len(at) != 1:
                continue
            entry = " ".join(lines[at[0] + 1 : at[0] + 4])
            reload, other = ("applied on reload", "restart to apply")[:: 1 if key["reload"] else -1]
            environment = key["environment"].replace("*", "<SERVICE>")
            for part in [f"default {key['defaultValue']}", reload, environment, key["summary"][:40]]:
                check(part in entry, f"workoutd.yaml.5: {name}: no {part!r} in {entry!r}")
            check(other not in entry, f"workoutd.yaml.5: {name}: says {other!r}")
        check_shipped_defaults(keys)
        for name in ["serial.baud", "web.listen", "state_dir"]:
            check(any(k["name"] == name for k in keys), f"configuration-keys has no {name}")

    if failures:
        for failure in failures:
            print(f"man-pages: FAIL {failure}", file=sys.stderr)
        sys.exit(1)
    print(f"man-pages: ok (3 pages, {len(keys)} keys, version {version})")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Writes the manuals workoutd(8), workoutctl(1) and workoutd.yaml(5) in roff.

The command pages come from swift-argument-parser's own description of each command tree
(`--experimental-dump-help`): every subcommand, option and flag with its help. The configuration page comes from
the table of keys the configuration check reads (`workoutd configuration-keys`), so the manual lists exactly the
keys the daemon accepts, each with its default and whether a reload applies it.

Usage: scripts/man-pages.py OUTPUT_DIR WORKOUTD WORKOUTCTL VERSION

WORKOUTD and WORKOUTCTL are commands to run (a path, or a wrapper that runs the binary under qemu-user for a
cross build). SOURCE_DATE_EPOCH, when set (dpkg-buildpackage sets it from debian/changelog), dates the pages.
"""

import json
import os
import subprocess
import sys
import time

CONFIG_FILE = "/etc/workoutd/workoutd.yaml"
# How a key's entry says whether SIGHUP applies it; Tests/shell/man-pages.py looks for these words.
RELOAD_LABELS = {True: "applied on reload", False: "restart to apply"}


def run_json(command, *arguments):
    """Runs `command arguments` and reads its standard output as JSON."""
    output = subprocess.run([command, *arguments], check=True, capture_output=True, text=True).stdout
    return json.loads(output)


def text(value):
    """Escapes running text for roff: backslashes, a leading dot or quote that would start a request, and any
    character beyond ASCII as a named glyph (\\[uXXXX]), since groff reads its input as Latin-1."""
    escaped = value.replace("\\", "\\e").replace("-", "\\-")
    escaped = "".join(c if ord(c) < 128 else "\\[u%04X]" % ord(c) for c in escaped)
    lines = []
    for line in escaped.split("\n"):
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def bold(value):
    return "\\fB" + text(value) + "\\fR"


def italic(value):
    return "\\fI" + text(value) + "\\fR"


def paragraphs(value):
    """Text with blank lines as paragraph breaks; lines that look laid out (indented) stay as they are."""
    out = []
    for block in value.strip().split("\n\n"):
        block_lines = block.split("\n")
        if any(line.startswith("  ") for line in block_lines):
            out += [".PP", ".nf", text(block), ".fi"]
        else:
            out += [".PP", text(" ".join(line.strip() for line in block_lines))]
    return out


def header(name, section, title):
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    date = time.strftime("%Y-%m-%d", time.gmtime(int(epoch))) if epoch else ""
    return [f'.TH "{name.upper()}" "{section}" "{date}" "workoutd {VERSION}" "{title}"']


def option_names(argument):
    names = []
    for name in argument.get("names", []):
        prefix = "--" if name["kind"] == "long" else "-"
        names.append(bold(prefix + name["name"]))
    return ", ".join(names)


def describe_argument(argument):
    """One .TP entry for an option, flag or positional argument."""
    value = argument.get("valueName")
    if argument["kind"] == "positional":
        term = italic(value or "argument")
    else:
        term = option_names(argument)
        if argument["kind"] == "option" and value:
            term += " " + italic(value)
    if argument.get("isRepeating"):
        term += " ..."
    help_text = argument.get("abstract", "")
    if argument.get("discussion"):
        discussion = argument["discussion"]
        if isinstance(discussion, dict):
            discussion = discussion.get("staticText") or ""
        help_text += (" " if help_text else "") + str(discussion)
    default = argument.get("defaultValue")
    if default not in (None, "", "false") and argument["kind"] != "flag":
        help_text += f" (default: {default})"
    return [".TP", term, text(help_text)]


def visible(items):
    return [item for item in items or [] if item.get("shouldDisplay", True)]


def is_builtin(argument):
    """argument-parser's own --help and --version, which every command takes: listed once, under OPTIONS."""
    return {name["name"] for name in argument.get("names") or []} & {"help", "version"} != set()


def subcommands(command):
    """The subcommands a reader may type: hidden ones and argument-parser's own `help` left out."""
    return [sub for sub in visible(command.get("subcommands")) if sub["commandName"] != "help"]


def synopsis(path, command):
    words = [bold(path)]
    for argument in visible(command.get("arguments")):
        if argument["kind"] == "positional":
            words.append(italic(argument.get("valueName") or "argument"))
    if any(argument["kind"] != "positional" for argument in visible(command.get("arguments"))):
        words.append("[" + italic("options") + "]")
    return " ".join(words)


def command_section(path, command):
    """A subsection for one subcommand: its synopsis, what it does and its options; then its own subcommands."""
    out = [f'.SS "{text(path)}"', synopsis(path, command), ".br"]
    if command.get("abstract"):
        out += [".PP", text(command["abstract"])]
    if command.get("discussion"):
        out += paragraphs(command["discussion"])
    for argument in visible(command.get("arguments")):
        if not is_builtin(argument):
            out += describe_argument(argument)
    for sub in subcommands(command):
        out += command_section(path + " " + sub["commandName"], sub)
    return out


def command_page(tool, section, title, files, environment, see_also):
    command = tool["command"]
    name = command["commandName"]
    out = header(name, section, title)
    out += [".SH NAME", f"{text(name)} \\- {text(command.get('abstract', ''))}"]
    out += [".SH SYNOPSIS", synopsis(name, command)]
    if subcommands(command):
        out += [".br", bold(name) + " " + italic("command") + " [" + italic("options") + "]"]
    out += [".SH DESCRIPTION"]
    out += paragraphs(command.get("discussion") or command.get("abstract", ""))
    default = command.get("defaultSubcommand")
    if default:
        out += [".PP", f"Without a command, {bold(name)} runs {bold(default)}."]
    options = visible(command.get("arguments"))
    if options:
        out += [".SH OPTIONS"]
        for argument in options:
            out += describe_argument(argument)
    if subcommands(command):
        out += [".SH COMMANDS"]
        for sub in subcommands(command):
            out += command_section(name + " " + sub["commandName"], sub)
    if environment:
        out += [".SH ENVIRONMENT"] + environment
    if files:
        out += [".SH FILES"] + files
    out += [".SH SEE ALSO", ", ".join(bold(page) for page in see_also)]
    return "\n".join(out) + "\n"


def configuration_page(keys):
    out = header("workoutd.yaml", 5, "File Formats")
    out += [".SH NAME", "workoutd.yaml \\- configuration of workoutd"]
    out += [".SH SYNOPSIS", bold(CONFIG_FILE)]
    out += [".SH DESCRIPTION"]
    out += paragraphs(
        f"""workoutd reads its configuration from {CONFIG_FILE} (or the file --config names; without either it runs
on the defaults below), then from WORKOUTD_* environment variables, then from its command-line flags: each
later source wins. Keys are written in YAML sections: serial.baud is the key baud in the section serial.

Every key can also be set by an environment variable: WORKOUTD_ plus the key in capitals with dots as
underscores (serial.baud is WORKOUTD_SERIAL_BAUD); lists are comma-separated.

A mistake stops the start with exit status 78: an unknown key (at any depth), an unknown WORKOUTD_* variable,
an unknown share service or a value of the wrong type is named with the file, the line and the nearest known
key. workoutd check-config runs the same checks without starting."""
    )
    out += [".SH RELOAD"]
    out += paragraphs(
        """SIGHUP (systemctl reload workoutd) reads the file again. An invalid new file is refused and the running
configuration stays. Keys marked "applied on reload" take effect at once (serial and reconnect settings at a
device's next open or command, limits at each device's next command, the web server starts, stops or moves).
Keys marked "restart to apply" are read only at start: a change is logged once as "takes effect after restart" and
listed by workoutctl status as pending restart until the daemon restarts."""
    )
    out += [".SH KEYS"]
    for key in keys:
        name = key["name"].replace("*", "<service>")
        environment = key["environment"].replace("*", "<SERVICE>")
        reload = RELOAD_LABELS[key["reload"]]
        out += [".TP", bold(name)]
        line = f"{italic(key['type'])}; default {bold(key['defaultValue'])}; {reload}; {bold(environment)}."
        out += [line, ".br", text(key["summary"])]
        if key.get("wildcard"):
            out += [".br", text("<service> is one of: " + ", ".join(key["wildcard"]) + ".")]
    out += [".SH EXAMPLE", ".nf"]
    out += [
        text(line)
        for line in [
            "serial:",
            "  baud: 115200",
            "devices:",
            "  paths: [/dev/ttyS4]",
            "  allowed_serials: [Acme_Band_WRB-0001]",
            "shares:",
            "  twitter:",
            "    sink: webhook",
            "    url: http://127.0.0.1:8080/shares",
            "web:",
            "  listen: 192.168.1.20:8470",
            "  token_credential: web-token",
        ]
    ]
    out += [".fi"]
    out += [".SH FILES", ".TP", bold(CONFIG_FILE), "The configuration file, installed with every key at its default."]
    out += [".SH SEE ALSO", ", ".join(bold(page) for page in ["workoutd(8)", "workoutctl(1)", "systemctl(1)"])]
    return "\n".join(out) + "\n"


def main():
    global VERSION
    if len(sys.argv) != 5:
        sys.exit("usage: man-pages.py OUTPUT_DIR WORKOUTD WORKOUTCTL VERSION")
    output, workoutd, workoutctl, VERSION = sys.argv[1:]
    os.makedirs(output, exist_ok=True)
    pages = {
        "workoutd.8": command_page(
            run_json(workoutd, "--experimental-dump-help"),
            8,
            "System Administration",
            files=[
                ".TP",
                bold(CONFIG_FILE),
                "The configuration, " + bold("workoutd.yaml") + "(5).",
                ".TP",
                bold("/var/lib/workoutd"),
                "The state directory: the database workoutd.sqlite, its lock and the spooled shares.",
                ".TP",
                bold("/run/workoutd/control.sock"),
                "The control socket " + bold("workoutctl") + "(1) talks to.",
            ],
            environment=[
                ".TP",
                bold("WORKOUTD_*"),
                "Every configuration key, " + bold("workoutd.yaml") + "(5).",
            ],
            see_also=["workoutctl(1)", "workoutd.yaml(5)", "systemctl(1)", "journalctl(1)"],
        ),
        "workoutctl.1": command_page(
            run_json(workoutctl, "--experimental-dump-help"),
            1,
            "User Commands",
            files=[
                ".TP",
                bold("/run/workoutd/control.sock"),
                "The daemon's control socket (" + bold("--socket") + ").",
            ],
            environment=[],
            see_also=["workoutd(8)", "workoutd.yaml(5)"],
        ),
        "workoutd.yaml.5": configuration_page(run_json(workoutd, "configuration-keys")),
    }
    for name, page in pages.items():
        with open(os.path.join(output, name), "w", encoding="utf-8") as file:
            file.write(page)
        print(f"man-pages: {os.path.join(output, name)}")


VERSION = ""

if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""The reference C client's command builders, read back by a JSON parser.

Runs clients/c's print_lines, which builds start_workout with a location full of characters JSON must escape
(quote, backslash, tab, newline, CR, other C0 controls, DEL, multi-byte UTF-8), end_workout with the smallest
and largest 64-bit ids and share_workout for each service, and checks that every line is one JSON object that
Python's json module reads back as exactly the fields given (and that no line has a raw control character).

Usage: Tests/clients/builders.py path/to/print_lines
"""
import json
import subprocess
import sys

LOCATION = "Quote \" back\\slash tab\t nl\n cr\r \x01\x1f\x7f Caf\u00e9 \u2615"
EXPECTED = [
    {"command_type": "start_workout", "id": 42, "location": LOCATION, "date": "2020-03-16 19:45:13 +0000",
     "intensityLevel": 10},
    {"command_type": "end_workout", "id": -2**63},
    {"command_type": "end_workout", "id": 2**63 - 1},
    {"command_type": "share_workout", "id": 0, "service": "facebook"},
    {"command_type": "share_workout", "id": -1, "service": "instagram"},
    {"command_type": "share_workout", "id": 7, "service": "twitter"},
]


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 64
    output = subprocess.run([sys.argv[1]], check=True, capture_output=True).stdout
    assert output.endswith(b"\n"), "the last line does not end in LF"
    lines = output[:-1].split(b"\n")
    assert len(lines) == len(EXPECTED), f"{len(lines)} lines, expected {len(EXPECTED)}: {output!r}"
    for line, expected in zip(lines, EXPECTED):
        assert not any(byte < 0x20 for byte in line), f"a raw control character in {line!r}"
        decoded = json.loads(line.decode("utf-8"))
        assert decoded == expected, f"{line!r} reads back as {decoded!r}, expected {expected!r}"
    print(f"builders: {len(lines)} lines read back as built")
    return 0


if __name__ == "__main__":
    sys.exit(main())

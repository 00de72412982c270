#!/usr/bin/env python3
"""Seeded random mutations of valid command lines, each judged by a strict reference JSON reader.

Writes one record per mutated line to OUT: a verdict byte, the line's length (4 bytes, big-endian) and
the line. Verdicts:
  M  not JSON: the daemon must answer malformed_json with its syntax message
  N  JSON, but not an object: malformed_json ("must be a JSON object")
  V  a JSON object: the daemon must NOT answer malformed_json (it may still be unknown_command, ...)

The reference reader is Python's json, made strict:
  - bytes are decoded as strict UTF-8 first (overlong forms, UTF-16 surrogates encoded in UTF-8 and code
    points past U+10FFFF are errors);
  - NaN, Infinity and -Infinity are refused (parse_constant);
  - duplicate keys in any object are refused (object_pairs_hook; I-JSON, RFC 7493);
  - nesting deeper than 64 containers is refused (the daemon's documented limit);
  - a lone surrogate written as a \\u escape ("\\ud800") is refused: Python's json accepts it, RFC 8259's
    grammar allows it but leaves its meaning unpredictable, and the daemon rejects it, so the oracle decides
    the same way by checking every decoded string encodes to strict UTF-8.
Python's json is otherwise RFC 8259 exactly for a str: whitespace is space/tab/LF/CR, control characters
in strings are errors (strict=True), numbers follow the RFC grammar.

Usage: mutations.py SEED COUNT OUT
"""
import json
import random
import struct
import sys

MAX_DEPTH = 64

SEEDS = [
    b'{"id":1,"command_type":"start_workout","location":"Gym","date":"2020-03-16 19:45:13 +0000","intensityLevel":4}',
    b'{"id":"a-1","command_type":"end_workout"}',
    b'{"command_type":"share_workout","service":"twitter","id":7}',
    b'{"id":2,"command_type":"start_workout","location":"Caf\xc3\xa9 \\u00e9\\ud83d\\ude00","date":"2020-03-16T19:45:13Z","intensityLevel":10}',
    b' {"command_type" : "end_workout" , "extra" : [1, -2.5e3, true, false, null, {"a": "\\n\\t\\/"}]}\t',
    b'{"id":3,"command_type":"share_workout","service":"facebook","x":{"y":[[0.5],{}]},"z":-0}',
    b'{"id":null,"command_type":"end_workout","note":"\\"quoted\\" \\\\ back"}',
]

# Bytes that matter to a JSON reader, to UTF-8, and to framing.
INTERESTING = [b'\x00', b'\r', b'\x7f', b'\t', b' ', b'\x1f', b'\x80', b'\xc0', b'\xc1', b'\xbf', b'\xed', b'\xf4',
               b'\xf5', b'\xff', b'\xc3', b'\xe0', b'\xf0', b'\xed\xa0\x80', b'\xc0\xaf', b'\xe0\x80\xaf',
               b'\xf4\x90\x80\x80', b'{', b'}', b'[', b']', b':', b',', b'"', b'\\', b'u', b'0', b'1', b'-',
               b'+', b'.', b'e', b'E', b'n', b't', b'f', b'\\u', b'\\ud800', b'\\udc00', b'x', b'a', b'N', b'I']


class Refused(ValueError):
    pass


def refuse_constant(name):
    raise Refused(f"constant {name}")


def no_duplicates(pairs):
    seen = set()
    for key, _ in pairs:
        if key in seen:
            raise Refused(f"duplicate key {key!r}")
        seen.add(key)
    return dict(pairs)


def check(value, depth):
    """Depth limit, and every string (key or value) is real Unicode (no lone surrogate)."""
    if isinstance(value, (dict, list)):
        if depth + 1 > MAX_DEPTH:
            raise Refused("too deep")
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        for key, item in items:
            if key is not None:
                key.encode('utf-8')
            check(item, depth + 1)
    elif isinstance(value, str):
        value.encode('utf-8')


def judge(line: bytes) -> bytes:
    try:
        text = line.decode('utf-8', 'strict')
        value = json.loads(text, parse_constant=refuse_constant, object_pairs_hook=no_duplicates)
        check(value, 0)
    except (ValueError, UnicodeError, RecursionError):
        return b'M'
    return b'V' if isinstance(value, dict) else b'N'


def mutate(rng: random.Random, line: bytes) -> bytes:
    data = bytearray(line)
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        position = rng.randrange(len(data) + 1)
        kind = rng.randrange(4)
        piece = rng.choice(INTERESTING) if rng.random() < 0.7 else bytes([rng.randrange(256)])
        if kind == 0:  # insert
            data[position:position] = piece
        elif kind == 1 and data:  # delete
            del data[min(position, len(data) - 1)]
        elif kind == 2 and data:  # replace
            position = min(position, len(data) - 1)
            data[position:position + 1] = piece
        elif data:  # duplicate a run
            start = min(position, len(data) - 1)
            run = data[start:start + rng.randrange(1, 12)]
            data[start:start] = run
    return bytes(data)


def main():
    seed, count, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
    rng = random.Random(seed)
    lines = [mutate(rng, rng.choice(SEEDS)) for _ in range(count)]
    # Deep nesting at and past the limit, which random edits do not reach.
    for depth in (63, 64, 65, 100000):
        lines.append(b'{"command_type":"end_workout","deep":' + b'[' * (depth - 1) + b']' * (depth - 1) + b'}')
    with open(out, 'wb') as f:
        for line in lines:
            f.write(judge(line) + struct.pack('>I', len(line)) + line)


if __name__ == '__main__':
    main()

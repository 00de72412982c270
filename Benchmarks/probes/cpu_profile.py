#!/usr/bin/env python3
"""Where a single-flight command's CPU goes, from a `perf record -g` profile of the daemon (part cpu).

    cpu_profile.py TITLE PERF.DATA     prints markdown: the top functions by own samples and the phases

Functions are demangled with swift-demangle (--simplified). A sample belongs to the phase of the innermost frame of
its call chain that matches one of PHASES, read from the leaf outwards, so a memcpy or a retain called from the
reply encoder counts for encode. A sample none of whose frames match falls to "runtime" (allocation, reference
counting, when its leaf is there) or to "event loop and other" (NIO's loop, wake-ups, the scheduler, threads).
The patterns are module, type and function names (workoutd's own, NIO's, SQLite's, the kernel's): a rename moves
samples to "event loop and other", which the table shows.
"""
import collections
import re
import shutil
import subprocess
import sys

# Tried in this order against each frame ("symbol (module)"); the first that matches names the frame's phase.
PHASES = [
    ("store", r"WorkoutStorage|SQLiteWorkoutStore|InMemoryWorkoutStore|sqlite3|libsqlite|CommitTransaction|"
              r"BoundStatement|ReplyRing|fdatasync|fsync|ext4|jbd2|xfs_|btrfs|overlay|iomap|blk_|nvme|virtblk|"
              r"generic_perform_write|CWALWriteGathering"),
    ("encode", r"ReplyEncodingHandler|OrderedJSONEncoder|JSONEncoder|Reply\b.*encode|encode.*Reply|ReplyLineEnding"),
    ("decode", r"LineFrameDecoder|LineDecodingHandler|FlatJSONDecoder|FlatJSONObject|DecodedLine|WireDateParser|"
               r"WorkoutDateTransformer|ContainerTransformer|ByteToMessage|Command\+FlatObject|Command\.init"),
    ("validate", r"StrictJSONValidator|UntrustedText|DeviceLimits|TokenBucket|BatchAdmission|DeviceAdmission|"
                 r"ProtocolError|validat"),
    ("session", r"SessionMachine|DeviceSession|SessionState|SessionStore|CommandDispatchHandler|WorkoutEngine|"
                r"RecentReplies|IDAllocator|CommitPipeline|CommitChain|BatchRunner|ShareQueueStore|WorkoutClock"),
    ("write", r"n_tty_write|tty_write|pty_write|do_tty_write|ksys_write|vfs_write|__libc_write|\bwritev?\b|"
              r"PendingWrites|writeToFileDescriptor|flushNow|NIOPipeBootstrap.*write|\.write\(|\.flush\("),
    ("read", r"n_tty_read|tty_read|ksys_read|vfs_read|__libc_read|\bread\b|readFromSocket|readFromFileDescriptor|"
             r"RecvByteBufferAllocator|readIfNeeded|\.read\(|channelRead"),
]
RUNTIME = r"swift_retain|swift_release|swift_allocObject|swift_deallocObject|swift_bridgeObject|malloc|free|" \
          r"_int_|swift_beginAccess|swift_endAccess|swift_dynamicCast|swift_getGenericMetadata|swift_slowAlloc|" \
          r"swift_slowDealloc|swift_isUniquelyReferenced|objc_|_swift_"
ORDER = [name for name, _ in PHASES] + ["runtime", "event loop and other"]
COMPILED = [(name, re.compile(pattern)) for name, pattern in PHASES]
RUNTIME_PATTERN = re.compile(RUNTIME)


def samples(path):
    """The call chains (leaf first) of every sample: lists of (symbol, module)."""
    script = subprocess.run(
        ["perf", "script", "-i", path, "-F", "ip,sym,dso", "--no-inline"],
        capture_output=True, text=True, errors="replace", check=True,
    ).stdout
    chain = []
    for line in script.splitlines():
        line = line.strip()
        if not line:
            if chain:
                yield chain
            chain = []
            continue
        match = re.match(r"[0-9a-f]+\s+(.*?)\s+\((.*)\)$", line)
        if match:
            symbol = re.sub(r"\+0x[0-9a-f]+$", "", match.group(1))
            chain.append((symbol, match.group(2).rsplit("/", 1)[-1]))
    if chain:
        yield chain


def demangler(symbols):
    """Every symbol demangled (simplified) when swift-demangle is there; else as it is."""
    symbols = sorted(symbols)
    tool = shutil.which("swift-demangle")
    if not tool or not symbols:
        return {symbol: symbol for symbol in symbols}
    output = subprocess.run(
        [tool, "--simplified", "--compact"], input="\n".join(symbols) + "\n", capture_output=True, text=True,
    ).stdout.splitlines()
    return dict(zip(symbols, output)) if len(output) == len(symbols) else {symbol: symbol for symbol in symbols}


def phase_of(chain):
    for symbol, module in chain:
        frame = f"{symbol} ({module})"
        for name, pattern in COMPILED:
            if pattern.search(frame):
                return name
    return "runtime" if chain and RUNTIME_PATTERN.search(chain[0][0]) else "event loop and other"


def main():
    title, path = sys.argv[1], sys.argv[2]
    chains = list(samples(path))
    if not chains:
        print(f"{title}: no samples.\n")
        return
    names = demangler({symbol for chain in chains for symbol, _ in chain})
    chains = [[(names.get(symbol, symbol), module) for symbol, module in chain] for chain in chains]
    total = len(chains)
    leaves = collections.Counter(f"{chain[0][0]} ({chain[0][1]})" for chain in chains)
    phases = collections.Counter(phase_of(chain) for chain in chains)

    def clip(text, width=110):
        text = text.replace("|", "\\|")
        return text if len(text) <= width else text[: width - 1] + "…"

    print(f"{title}: {total} samples.\n")
    print("| phase | share of the daemon's CPU |")
    print("|---|---:|")
    for name in ORDER:
        print(f"| {name} | {100 * phases[name] / total:.1f} % |")
    print()
    print("| function (own samples, module) | share |")
    print("|---|---:|")
    for frame, count in leaves.most_common(15):
        print(f"| `{clip(frame)}` | {100 * count / total:.1f} % |")
    print()


if __name__ == "__main__":
    main()

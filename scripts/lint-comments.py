#!/usr/bin/env python3
"""make lint's comment rules, checked after swift-format (scripts/lint.sh).

Prints file:line: rule: text for each finding and exits 1 if there is any.

Rules
  issue-number  No comment names an issue: "issue 31", "issues 4 and 30", "(#12)". Checked in the
                comments of every Swift file (outside Sources/WebAPI/Generated), of the C sources, and of
                the shell, Python and Makefile sources (`#` comments). Issues belong in commit bodies
                (`Refs: #N`), the reasons behind a change in docs/decisions/.
  summary       A doc comment (a `///` block or `/** */`) starts with a one-sentence summary of at most
                100 characters. The first sentence runs from the block's first line to the first `.`, `?`
                or `!` followed by a space and a word that does not start in lower case (so "e.g. the"
                does not end it), or to the end of the first paragraph (a blank `///` line, a list item,
                a code fence). Code spans (backticks) are counted whole and never end a sentence.
  measurement   No Swift or C comment gives a figure measured on a machine. Design constants stay ("at
                most 64 KiB", "a 500 ms timeout", "4096 frames"); what is flagged is a number with a unit
                that only a measurement produces:
                  - a ratio: 1.29x, 0.9×, "2 times faster" (a number followed by × or by x and no letter);
                  - a percentage: 44 %, 12% (a design share is written as a fraction in code, not a comment);
                  - a time in µs or ns, or in ms/s with a decimal point (313 µs, 0.4 ms): limits and
                    intervals of the code are whole milliseconds or seconds;
                  - a rate or size with a decimal point: "169.2k commands/s", "6.27 KB", "60.5 MB";
                  - a count per unit of work: "4 pwrite64 per command", "1.12 writes per commit";
                  - a number after "about", "~" or "roughly" with a size or time unit ("about 60 MB");
                  - "took N", "measured N", "N runs".
                The rule is a net for the usual shapes, not a proof: a reviewer still reads the comments.

Usage: scripts/lint-comments.py [file ...]   (no argument: every file of the tree that git knows)
"""

import os
import re
import subprocess
import sys

SUMMARY_LIMIT = 100

ISSUE = re.compile(r"\bissues?\s+#?\d+|\bissues?\s+(?:\d+\s*(?:,|and|or)\s*)+\d+|(?<![\w&#/])#\d+\b", re.I)

_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_DECIMAL = r"\d[\d,]*\.\d+"
MEASUREMENT = re.compile(
    "|".join(
        [
            _NUMBER + r"\s*(?:×|x(?![\w]))",  # a ratio
            _NUMBER + r"\s*times\s+(?:faster|slower|more|less|as)\b",
            _NUMBER + r"\s*%",  # a share
            _NUMBER + r"\s*(?:µs|us|ns)\b",  # a time only a measurement gives
            _DECIMAL + r"\s*(?:ms|s|seconds?|milliseconds?)\b",
            _DECIMAL + r"k?\s*(?:[KMG]i?B|bytes|commands/s|ops/s)\b",
            _NUMBER + r"k\s*(?:commands|ops|writes)/s\b",
            _NUMBER + r"\s+(?:pwrite64|pwrite|fsync|fdatasync|fcntl|syscall|write|page|call|hop)s?\s+per\s+"
            r"(?:single-flight\s+|pipelined\s+)?(?:command|commit|batch)\b",
            r"(?:about|roughly|~)\s*" + _NUMBER + r"\s*(?:[KMG]i?B|bytes|ms|s|seconds|minutes|µs)\b",
            r"\b(?:took|measured)\s+(?:about\s+)?" + _NUMBER + r"\b",
            r"\b" + _NUMBER + r"\s+runs\b",
        ]
    ),
    re.I,
)

SWIFT_SKIP = ("Sources/WebAPI/Generated/",)
SELF = "scripts/lint-comments.py"  # its docstring quotes what the rules catch
_CODE_SPAN = re.compile(r"`[^`]*`")
HASH_COMMENTED = (".sh", ".py", ".mk")
HASH_COMMENTED_NAMES = ("Makefile", "rules", "run", "guest-early", "guest-run", "workoutd.postinst", "workoutd.postrm")


# --- Swift and C: a small lexer that knows strings, so `//` inside a literal is no comment ------------------------

_CODE = re.compile(r'//|/\*|(#*)"""|(#*)"|\(|\)|\'(?:\\.|[^\'\\\n])*\'')


def swift_comments(text, c_like=False):
    """Yields (line, column, kind, body) for every comment line; kind is '//', '///', '/*' or '/**'."""
    line_starts = [0]
    for match in re.finditer("\n", text):
        line_starts.append(match.end())

    def line_of(position):
        low, high = 0, len(line_starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            if line_starts[middle] <= position:
                low = middle
            else:
                high = middle - 1
        return low + 1

    comments = []
    # Each frame is the paren depth of an interpolation being lexed as code; the base frame is None.
    stack = [None]
    position = 0
    length = len(text)
    while position < length:
        match = _CODE.search(text, position)
        if match is None:
            break
        token = match.group(0)
        start = match.start()
        if token == "//":
            end = text.find("\n", start)
            end = length if end < 0 else end
            body = text[start:end]
            kind = "///" if body.startswith("///") and not body.startswith("////") else "//"
            comments.append((line_of(start), start - line_starts[line_of(start) - 1], kind, body[len(kind) :]))
            position = end
        elif token == "/*":
            depth, cursor = 1, start + 2
            while depth and cursor < length:
                nxt = re.compile(r"/\*|\*/").search(text, cursor)
                if nxt is None:
                    cursor = length
                    break
                depth += 1 if nxt.group(0) == "/*" else -1
                cursor = nxt.end()
            body = text[start:cursor]
            kind = "/**" if body.startswith("/**") and not body.startswith("/**/") else "/*"
            first = line_of(start)
            for offset, part in enumerate(body.split("\n")):
                comments.append((first + offset, 0, kind, part))
            position = cursor
        elif token == "(":
            if stack[-1] is not None:
                stack[-1] += 1
            position = match.end()
        elif token == ")":
            if stack[-1] is not None:
                if stack[-1] == 0:
                    stack.pop()
                    position = _string(text, match.end(), stack, comments)
                    continue
                stack[-1] -= 1
            position = match.end()
        elif token.startswith("'"):
            position = match.end()  # a C character literal
        else:
            if c_like:
                hashes, multiline = "", False
            else:
                multiline = token.endswith('"""')
                hashes = match.group(1) if multiline else match.group(2)
            stack.append(("string", hashes or "", multiline))
            position = _string(text, match.end(), stack, comments)
    return comments


def _string(text, position, stack, comments):
    """Lexes a string literal from position; returns where code resumes (after it, or in an interpolation)."""
    _, hashes, multiline = stack.pop()
    closing = ('"""' if multiline else '"') + hashes
    pattern = re.compile(re.escape("\\" + hashes) + r"(\()?|" + re.escape(closing) + ("" if multiline else r"|\n"))
    while True:
        match = pattern.search(text, position)
        if match is None:
            return len(text)
        token = match.group(0)
        if token == closing or token == "\n":
            return match.end()
        if match.group(1):  # an interpolation: lex it as code, then come back to this string
            stack.append(("string", hashes, multiline))
            stack.append(0)
            return match.end()
        position = match.end() + 1  # an escape: skip the escaped character


# --- doc comment summaries -----------------------------------------------------------------------------------------

_SENTENCE_END = re.compile(r"[.!?](?=\s+[^\sa-z]|\s*$)")
_ABBREVIATIONS = ("e.g", "i.e", "etc", "vs", "cf")


def first_sentence(lines):
    """The first sentence of a doc comment's lines (without their markers), joined by single spaces."""
    paragraph = []
    for line in lines:
        stripped = line.strip()
        if not stripped or stripped.startswith(("- ", "* ", "```", "#")) and paragraph:
            break
        paragraph.append(stripped)
    text = " ".join(paragraph)
    masked = re.sub(r"`[^`]*`", lambda m: "_" * len(m.group(0)), text)
    for match in _SENTENCE_END.finditer(masked):
        before = masked[: match.start()].lower()
        if before.endswith(_ABBREVIATIONS) and match.group(0) == ".":
            continue
        return text[: match.end()]
    return text


def doc_blocks(comments):
    """Groups doc comment lines into blocks: (first line, [bodies])."""
    blocks = []
    previous = None
    for line, column, kind, body in comments:
        if kind == "///":
            if previous is not None and previous[0] == "///" and previous[1] == line - 1 and blocks:
                blocks[-1][1].append(body)
            else:
                blocks.append((line, [body]))
            previous = ("///", line)
        elif kind == "/**":
            cleaned = re.sub(r"^\s*/\*\*|\*/\s*$|^\s*\*(?!/)", "", body)
            if previous is not None and previous[0] == "/**" and previous[1] == line - 1 and blocks:
                blocks[-1][1].append(cleaned)
            else:
                blocks.append((line, [cleaned]))
            previous = ("/**", line)
        else:
            previous = None
    return blocks


# --- files ---------------------------------------------------------------------------------------------------------


def hash_comments(text, path):
    """Yields (line, body) for the `#` comments of a shell, Python or Makefile source (heredocs included)."""
    for number, line in enumerate(text.split("\n"), 1):
        if number == 1 and line.startswith("#!"):
            continue
        match = re.search(r"(?:^|\s)#(?![!{])(.*)", line)
        if match:
            yield number, match.group(1)
        if path.endswith(".py"):
            # Python docstrings are comments too; a loose check: a line inside triple quotes is read whole.
            pass


def docstrings(text):
    for match in re.finditer(r'"""(.*?)"""', text, re.S):
        first = text.count("\n", 0, match.start()) + 1
        for offset, part in enumerate(match.group(1).split("\n")):
            yield first + offset, part


def check(path, text, findings):
    def report(line, rule, body):
        findings.append("%s:%d: %s: %s" % (path, line, rule, body.strip()[:120]))

    if path.endswith((".swift", ".c", ".h")):
        comments = swift_comments(text, c_like=not path.endswith(".swift"))
        for line, _, _, body in comments:
            if ISSUE.search(body):
                report(line, "issue-number", body)
            if MEASUREMENT.search(_CODE_SPAN.sub("``", body)):
                report(line, "measurement", body)
        if path.endswith(".swift"):
            for line, bodies in doc_blocks(comments):
                sentence = first_sentence(bodies)
                if len(sentence) > SUMMARY_LIMIT:
                    report(line, "summary", "first sentence of %d characters: %s" % (len(sentence), sentence))
    else:
        lines = list(hash_comments(text, path))
        if path.endswith(".py"):
            lines += list(docstrings(text))
        for line, body in lines:
            if ISSUE.search(body):
                report(line, "issue-number", body)


def checked(path):
    if path.startswith(SWIFT_SKIP) or path == SELF:
        return False
    name = os.path.basename(path)
    if path.endswith((".swift", ".c", ".h")):
        return True
    top = path.split("/")[0]
    if top not in ("scripts", "Tests", "Benchmarks", "mk", "debian", "Makefile", "Fuzz", ".ci"):
        return False
    return path.endswith(HASH_COMMENTED) or name in HASH_COMMENTED_NAMES


def main(arguments):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.chdir(root)
    if arguments:
        paths = arguments
    else:
        listed = subprocess.run(
            ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.split("\n")
        paths = [path for path in listed if path and checked(path) and os.path.isfile(path)]
    findings = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as source:
            check(path, source.read(), findings)
    for finding in findings:
        print(finding)
    if findings:
        print("lint-comments: %d findings in %d files" % (len(findings), len(paths)), file=sys.stderr)
        return 1
    print("lint-comments: %d files, no findings" % len(paths))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

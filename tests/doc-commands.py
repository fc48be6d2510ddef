#!/usr/bin/python3
"""What the documents say about benchctl, for tests/t0060 and t0061.

  doc-commands.py commands SRCDIR
      Every command line of README.md's code blocks and of the EXAMPLE(S)
      section of each man page in SRCDIR/man, in the documents' order, one
      per line: FILE:LINE, KIND (benchctl or other), the command as written
      (continuation lines joined, its comment left out) and its words
      (split as the shell splits them; separated by \\x1f), tab-separated.
      README.md gives only its benchctl commands (a prompt '$ ' before one
      is left out); a man page's examples give the others too, as KIND other.

  doc-commands.py exit-status PAGE
      The EXIT STATUS section of a man page, one status a line: the status
      as the page writes it (0, 1, ..., 128+N), the commands the entry is
      about, separated by ';' ('*' when it is about every command; a
      command's options follow it: 'submit --wait'), and the entry's text.
      An entry is about the commands it names in bold or in parentheses,
      but one it says "exits 0".
"""
import os
import re
import shlex
import sys

ESCAPES = {"-": "-", "e": "\\", "\\": "\\", "&": "", "~": " ", " ": " ", "(dq": '"', "(aq": "'",
           "(em": "--", "(en": "-", "[u2026]": "...", "|": "", "^": ""}


def unescape(s):
    """roff text (no font changes) as plain text"""
    return re.sub(r"\\(\(..|\[[^]]*\]|.)", lambda m: ESCAPES.get(m.group(1), ""), s)


def segments(line):
    """a roff line as (text, bold) pieces; None for a request without text"""
    m = re.match(r"[.'][ \t]*(\S+)[ \t]*(.*)", line)
    if not m:                       # text, with \fB \fI \fR \fP font changes
        out, bold = [], False
        for i, piece in enumerate(re.split(r"\\f(\[[^]]*\]|.)", line)):
            if i % 2:
                bold = piece in ("B", "[B]")
            elif piece:
                out.append((unescape(piece), bold))
        return out
    req, rest = m.group(1), m.group(2)
    args = [a if a is not None and q == "" else q.replace('""', '"')
            for q, a in re.findall(r'"((?:[^"]|"")*)"|(\S+)', rest)]
    args = [unescape(a) for a in args]
    if req in ("B", "SB"):
        return [(" ".join(args), True)]
    if req in ("I", "SM"):
        return [(" ".join(args), False)]
    if len(req) == 2 and set(req) <= set("BIR"):
        return [(a, req[i % 2] == "B") for i, a in enumerate(args)]
    return None


def section(lines, names):
    """(line number, line) of the sections whose .SH title is one of names"""
    on = False
    for n, line in enumerate(lines, 1):
        m = re.match(r"\.SH\s+\"?([^\"]*)\"?\s*$", line)
        if m:
            on = m.group(1).strip() in names
            continue
        if on:
            yield n, line


def emit(where, text, readme):
    if readme and not re.match(r"\s*(\$\s+)?(\S*/)?benchctl(\s|$)", text):
        return                      # not a benchctl command (JSON, another program)
    try:
        words = shlex.split(text, comments=True)
    except ValueError as e:
        sys.exit(f"{where}: cannot split '{text}': {e}")
    if readme and words and words[0] == "$":
        words = words[1:]
    if not words:
        return
    kind = "benchctl" if os.path.basename(words[0]) == "benchctl" else "other"
    print(f"{where}\t{kind}\t{' '.join(words)}\t" + "\x1f".join(words))


def joined(numbered):
    """(first line number, line) with continuation lines joined"""
    start, acc = None, ""
    for n, line in numbered:
        if start is None:
            start = n
        if line.rstrip().endswith("\\"):
            acc += line.rstrip()[:-1] + " "
            continue
        yield start, acc + line
        start, acc = None, ""
    if start is not None:
        yield start, acc


def commands(src):
    lines = open(os.path.join(src, "README.md"), encoding="utf-8").read().split("\n")
    block, fence = [], False
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith("```"):
            if fence:
                for at, text in joined(block):
                    emit(f"README.md:{at}", text, True)
                block = []
            fence = not fence
        elif fence:
            block.append((n, line))
    mandir = os.path.join(src, "man")
    for page in sorted(f for f in os.listdir(mandir) if re.search(r"\.[1-8]$", f)):
        lines = open(os.path.join(mandir, page), encoding="utf-8").read().split("\n")
        nofill, block = False, []
        for n, line in section(lines, ("EXAMPLE", "EXAMPLES")):
            if re.match(r"\.(nf|EX)\b", line):
                nofill = True
            elif re.match(r"\.(fi|EE)\b", line):
                nofill = False
            elif nofill and not line.startswith((".", "'")):
                block.append((n, unescape(line)))
                continue
            for at, text in joined(block):
                emit(f"man/{page}:{at}", text, False)
            block = []
        for at, text in joined(block):
            emit(f"man/{page}:{at}", text, False)


def exit_status(page):
    lines = open(page, encoding="utf-8").read().split("\n")
    names = set(re.findall(r"^\.B benchctl ([a-z][a-z-]*)", "\n".join(lines), re.M))
    entries, entry, expect_tag = [], None, False
    for _, line in section(lines, ("EXIT STATUS",)):
        if line.startswith(".TP"):
            expect_tag = True
            continue
        segs = segments(line)
        if expect_tag and segs:
            entry = ["".join(t for t, _ in segs).strip(), []]
            entries.append(entry)
            expect_tag = False
        elif entry is not None and segs:
            entry[1].append(segs)
    for status, body in entries:
        text, bold = "", []
        for segs in body:
            text += " " if text else ""
            for t, b in segs:
                if b:
                    bold.append((len(text), t))
                text += t
        about = []
        for at, t in bold:
            words = t.split()
            if words and words[0] in names and not re.match(r"\s*exits 0\b", text[at + len(t):]):
                about.append(t)
        for inside in re.findall(r"\(([^()]*)\)", text):
            for item in inside.split(","):
                words = item.split()
                if words and words[0] in names and all(w.startswith("-") for w in words[1:]):
                    about.append(" ".join(words))
        about = list(dict.fromkeys(about))
        print(f"{status}\t{';'.join(about) or '*'}\t{' '.join(text.split())}")


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "commands":
        commands(sys.argv[2])
    elif len(sys.argv) == 3 and sys.argv[1] == "exit-status":
        exit_status(sys.argv[2])
    else:
        sys.exit(__doc__)

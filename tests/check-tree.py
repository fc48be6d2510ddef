#!/usr/bin/python3
"""check-tree.py: test oracle for staging: is DST an exact copy of SRC?

    check-tree.py SRC DST        prints each difference, exits 1 if any
    check-tree.py --sums MANIFEST ROOT
                                 checks every 'f' line of a manifest against
                                 `xxhsum -H2` of the file (an independent
                                 XXH3-128), and the 'end' line's checksum

Compared: the type of every entry, the bytes of every file, permission bits
and nanosecond mtimes of files and directories, link targets.  Not staged,
so left out: FIFOs, sockets, devices, links whose target leaves the tree,
the root's .benchd-manifest.  DST must hold no .benchd-tmp.* file that is
not in SRC.
"""
import os
import stat
import subprocess
import sys


def link_escapes(rel, target):
    if not target or target.startswith(b'/'):
        return True
    depth = rel.count(b'/')
    descended = False
    for part in target.split(b'/'):
        if part == b'..':
            if descended:
                return True
            depth -= 1
            if depth < 0:
                return True
        elif part not in (b'', b'.'):
            descended = True
    return False


def walk(root):
    out = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            if rel == b'.benchd-manifest':
                continue
            out[rel] = os.lstat(full)
    return out


def compare(src, dst):
    problems = []
    s, d = walk(src), walk(dst)
    for rel, st in sorted(d.items()):
        if os.path.basename(rel).startswith(b'.benchd-tmp.') and rel not in s:
            problems.append(b'temporary file left: ' + rel)
    for rel, st in sorted(s.items()):
        mode = st.st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode)):
            if rel in d:
                problems.append(b'special file staged: ' + rel)
            continue
        if stat.S_ISLNK(mode) and link_escapes(rel, os.readlink(os.path.join(src, rel))):
            if rel in d:
                problems.append(b'link leading out staged: ' + rel)
            continue
        if rel not in d:
            problems.append(b'missing: ' + rel)
            continue
        dt = d[rel]
        if stat.S_IFMT(mode) != stat.S_IFMT(dt.st_mode):
            problems.append(b'type differs: ' + rel)
            continue
        sp, dp = os.path.join(src, rel), os.path.join(dst, rel)
        if stat.S_ISLNK(mode):
            if os.readlink(sp) != os.readlink(dp):
                problems.append(b'link target differs: ' + rel)
            continue
        if stat.S_IMODE(mode) != stat.S_IMODE(dt.st_mode):
            problems.append(b'mode differs: %s (%o, %o)' % (rel, stat.S_IMODE(mode), stat.S_IMODE(dt.st_mode)))
        if st.st_mtime_ns != dt.st_mtime_ns:
            problems.append(b'mtime differs: ' + rel)
        if stat.S_ISREG(mode):
            with open(sp, 'rb') as a, open(dp, 'rb') as b:
                if a.read() != b.read():
                    problems.append(b'content differs: ' + rel)
    for rel in sorted(set(d) - set(s)):
        if not os.path.basename(rel).startswith(b'.benchd-tmp.'):
            problems.append(b'extra: ' + rel)
    return problems


def unescape(field):
    out = bytearray()
    i = 0
    while i < len(field):
        if field[i:i + 1] == b'%':
            out.append(int(field[i + 1:i + 3], 16))
            i += 3
        else:
            out += field[i:i + 1]
            i += 1
    return bytes(out)


def sums(manifest, root):
    problems = []
    data = open(manifest, 'rb').read()
    body, _, last = data.rstrip(b'\n').rpartition(b'\n')
    body += b'\n'
    fields = last.split(b' ')
    xxh = subprocess.run(['xxhsum', '-H2', '-'], input=body, capture_output=True, check=True).stdout.split()[0]
    if fields[0] != b'end' or fields[1] != xxh:
        problems.append(b'end line checksum differs from xxhsum: ' + last)
    n = 0
    for line in body.split(b'\n')[1:-1]:
        f = line.split(b' ')
        if f[0] != b'f':
            continue
        n += 1
        path = os.path.join(root, unescape(f[5]))
        with open(path, 'rb') as fh:
            got = subprocess.run(['xxhsum', '-H2', '-'], stdin=fh, capture_output=True, check=True).stdout.split()[0]
        if got != f[4]:
            problems.append(b'checksum differs from xxhsum: ' + f[5])
    if n == 0:
        problems.append(b'no file in the manifest')
    return problems


def main():
    args = [os.fsencode(a) for a in sys.argv[1:]]
    if args and args[0] == b'--sums':
        problems = sums(args[1], args[2])
    else:
        problems = compare(args[0], args[1])
    for p in problems:
        sys.stdout.buffer.write(p.replace(b'\n', b'\\n') + b'\n')
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())

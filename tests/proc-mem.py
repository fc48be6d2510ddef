#!/usr/bin/python3
"""proc-mem.py OUT ROOT_PID DIR...: the peak memory of a test's processes.

Twice a second (--interval) it sums the memory of the processes a test
started: ROOT_PID's descendants, every process with one of the DIRs on its
command line (daemons that detached: munged, slurmctld, slurmd, benchd), every
slurmstepd holding a file under a DIR open (job steps: their title hides
their command line), and the descendants of all of these (the job's
processes); never itself.  Resident memory (RSS, counting shared pages once
per process: an upper bound) and proportional set size (PSS, shared pages
divided among their users) are summed; their peaks, with the number of
processes and the time of each, are rewritten to OUT as one line of JSON
whenever one grows, and once more at SIGTERM, which ends it.
"""
import argparse
import json
import os
import signal
import sys
import time

PAGE = os.sysconf("SC_PAGE_SIZE")


def read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return None


def snapshot(root, dirs, me):
    """(pid -> parent pid) of every process and the set the test owns."""
    parent, mine = {}, set()
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        pid = int(name)
        stat = read(f"/proc/{pid}/stat")
        if not stat:
            continue
        rest = stat[stat.rfind(b")") + 2:].split()
        if rest[0] == b"Z":
            continue
        parent[pid] = int(rest[1])
        cmd = read(f"/proc/{pid}/cmdline") or b""
        if any(d in cmd for d in dirs):
            mine.add(pid)
        elif (read(f"/proc/{pid}/comm") or b"").strip() == b"slurmstepd":
            try:
                fds = os.listdir(f"/proc/{pid}/fd")
            except OSError:
                fds = []
            for fd in fds:
                try:
                    target = os.readlink(f"/proc/{pid}/fd/{fd}").encode()
                except OSError:
                    continue
                if any(target.startswith(d) for d in dirs):
                    mine.add(pid)
                    break
    mine.add(root)
    children = {}
    for pid, pp in parent.items():
        children.setdefault(pp, []).append(pid)
    todo, owned = list(mine), set()
    while todo:
        pid = todo.pop()
        if pid in owned or pid not in parent:
            continue
        owned.add(pid)
        todo.extend(children.get(pid, []))
    owned.discard(me)
    return owned


def memory(pid):
    """(RSS, PSS) in bytes; PSS is RSS where smaps_rollup cannot be read."""
    statm = read(f"/proc/{pid}/statm")
    if not statm:
        return 0, 0
    rss = int(statm.split()[1]) * PAGE
    pss = rss
    rollup = read(f"/proc/{pid}/smaps_rollup")
    if rollup:
        for line in rollup.splitlines():
            if line.startswith(b"Pss:"):
                pss = int(line.split()[1]) * 1024
                break
    return rss, pss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("root", type=int)
    ap.add_argument("dirs", nargs="+")
    ap.add_argument("--interval", type=float, default=0.5)
    a = ap.parse_args()
    dirs = [os.path.abspath(d).encode() + b"/" for d in a.dirs]
    me = os.getpid()
    t0 = time.monotonic()
    peak = {"rss_bytes": 0, "rss_processes": 0, "rss_at_s": 0.0,
            "pss_bytes": 0, "pss_processes": 0, "pss_at_s": 0.0, "samples": 0}

    def write():
        tmp = a.out + ".tmp"
        with open(tmp, "w") as f:
            json.dump(peak, f)
            f.write("\n")
        os.replace(tmp, a.out)

    def stop(*_):
        write()
        sys.exit(0)

    signal.signal(signal.SIGTERM, stop)
    while True:
        pids = snapshot(a.root, dirs, me)
        rss = pss = 0
        for pid in pids:
            r, p = memory(pid)
            rss += r
            pss += p
        peak["samples"] += 1
        grew = False
        now = round(time.monotonic() - t0, 1)
        if rss > peak["rss_bytes"]:
            peak.update(rss_bytes=rss, rss_processes=len(pids), rss_at_s=now)
            grew = True
        if pss > peak["pss_bytes"]:
            peak.update(pss_bytes=pss, pss_processes=len(pids), pss_at_s=now)
            grew = True
        if grew:
            write()
        if a.root not in pids and not os.path.exists(f"/proc/{a.root}"):
            stop()
        time.sleep(a.interval)


if __name__ == "__main__":
    main()

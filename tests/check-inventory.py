#!/usr/bin/python3
"""check-inventory.py EXPECTED.json ACTUAL.json

Compares `benchd --inventory --json --sysfs-root TREE` (ACTUAL) with the
expected.json recorded next to TREE.  Every field of EXPECTED must be in
ACTUAL with the same value (numbers within 1e-6 relative); ACTUAL may hold
more.  Fields that describe the fixture rather than the inventory (machine,
description, system_config, topology.legend) and what needs NVML
(topology.nvidia_smi_gpu_gpu: NVLink is not visible in sysfs) are not
compared.  Prints one line per difference and exits 1 when there is any.
"""
import json
import sys

NOT_COMPARED = {"machine", "description", "system_config"}
NOT_COMPARED_TOPO = {"legend", "nvidia_smi_gpu_gpu", "nvlink_note"}


def diff(want, got, where, out):
    if isinstance(want, dict):
        if not isinstance(got, dict):
            out.append(f"{where}: expected an object, got {json.dumps(got)[:80]}")
            return
        for k, v in want.items():
            if k not in got:
                out.append(f"{where}.{k}: missing")
            else:
                diff(v, got[k], f"{where}.{k}", out)
    elif isinstance(want, list):
        if not isinstance(got, list):
            out.append(f"{where}: expected a list, got {json.dumps(got)[:80]}")
            return
        if len(want) != len(got):
            out.append(f"{where}: {len(got)} entries, expected {len(want)}")
        for i, (w, g) in enumerate(zip(want, got)):
            diff(w, g, f"{where}[{i}]", out)
    elif isinstance(want, bool) or want is None or isinstance(want, str):
        if want != got or type(want) is not type(got):
            out.append(f"{where}: got {json.dumps(got)}, expected {json.dumps(want)}")
    elif isinstance(want, (int, float)):
        if isinstance(got, bool) or not isinstance(got, (int, float)) or \
                abs(want - got) > 1e-6 * max(1.0, abs(want)):
            out.append(f"{where}: got {json.dumps(got)}, expected {json.dumps(want)}")
    else:
        out.append(f"{where}: cannot compare {type(want).__name__}")


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        return 2
    with open(sys.argv[1]) as f:
        want = json.load(f)
    with open(sys.argv[2]) as f:
        got = json.load(f)
    want = {k: v for k, v in want.items() if k not in NOT_COMPARED}
    if isinstance(want.get("topology"), dict):
        want["topology"] = {k: v for k, v in want["topology"].items() if k not in NOT_COMPARED_TOPO}
    out = []
    diff(want, got, "inventory", out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())

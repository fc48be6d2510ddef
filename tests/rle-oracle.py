#!/usr/bin/env python3
"""rle-oracle.py: pycocotools' answers for every operation of data/mask.h,
recorded once into tests/fixtures/rle/ for tests/unit/test-mask.c (which
needs no Python).  Deterministic: rerunning it gives the same files.

  rle-oracle.py OUT_DIR     (with pycocotools and numpy, e.g. a venv's python)

Files (JSON, one case per line):
  masks.json      encode/decode, area, toBbox of small binary masks
                  (bits: row-major, hex, most significant bit first)
  odd-counts.json area and toBbox of hand-made counts pycocotools accepts
                  (zero-length runs, sums off h*w): 2.0.11's rleToBbox skips
                  empty runs of 1, and a mask without any other run of 1
                  gets the box [w, h, 2^32 + 1 - w, 2^32 + 1 - h]
  merge.json      merge (union and intersection) of 1-4 masks
  iou.json        iou of masks (crowd flags, size mismatch) and of boxes
  poly.json       frPyObjects of one or more polygons, each part's string
                  and the union (annToRLE); frBbox of boxes
  strings.json    counts and their compressed strings (large counts,
                  negative deltas)
  coco.json       a small COCO instances file, and coco-masks.json:
                  COCO.annToRLE of each of its annotations
"""
import json
import math
import os
import random
import sys

import numpy as np
import pycocotools._mask as _mask
import pycocotools.mask as M
from pycocotools.coco import COCO


# ---- helpers ----------------------------------------------------------------

def fr_string(s):
    """rleFrString: a compressed string to its counts (Python integers)."""
    cnts, p = [], 0
    while p < len(s):
        x, k, more = 0, 0, True
        while more:
            c = ord(s[p]) - 48
            x |= (c & 0x1F) << (5 * k)
            more = c & 0x20
            p += 1
            k += 1
            if not more and c & 0x10:
                x |= -1 << (5 * k)
        if len(cnts) > 2:
            x += cnts[-2]
        cnts.append(x)
    return cnts


def to_string(cnts):
    """rleToString, with Python integers (for counts pycocotools cannot take)."""
    out = []
    for i, c in enumerate(cnts):
        x = c - cnts[i - 2] if i > 2 else c
        more = True
        while more:
            ch = x & 0x1F
            x >>= 5
            more = x != -1 if ch & 0x10 else x != 0
            if more:
                ch |= 0x20
            out.append(chr(ch + 48))
    return "".join(out)


def runs(mask):
    """Column-major run lengths of a 0/1 array, starting with a run of 0."""
    flat = np.asarray(mask, dtype=np.uint8).flatten(order="F")
    cnts, prev, n = [], 0, 0
    for v in flat:
        if v != prev:
            cnts.append(n)
            n, prev = 0, v
        n += 1
    cnts.append(n)
    return cnts


def hexbits(mask):
    bits = "".join("1" if v else "0" for v in np.asarray(mask).flatten(order="C"))
    bits += "0" * (-len(bits) % 4)
    return "".join("%x" % int(bits[i:i + 4], 2) for i in range(0, len(bits), 4))


def encode(mask):
    """pycocotools' encode of an h x w 0/1 mask: (string, counts), checked."""
    r = M.encode(np.asfortranarray(np.asarray(mask, dtype=np.uint8)))
    s = r["counts"].decode()
    cnts = fr_string(s)
    assert cnts == runs(mask), "fr_string disagrees with the runs"
    assert to_string(cnts) == s
    return s, cnts


def rle_of(h, w, cnts):
    """An RLE dict pycocotools takes, from counts (frUncompressedRLE)."""
    return _mask.frUncompressedRLE([{"counts": list(cnts), "size": [h, w]}], h, w)[0]


def floats(v):
    return [float(x) for x in np.asarray(v).flatten()]


def write(path, cases):
    with open(path, "w") as f:
        f.write("[\n")
        for i, c in enumerate(cases):
            f.write(json.dumps(c, separators=(",", ":")))
            f.write(",\n" if i + 1 < len(cases) else "\n")
        f.write("]\n")


# ---- masks ------------------------------------------------------------------

def blob(rnd, h, w, n=None):
    m = np.zeros((h, w), np.uint8)
    yy, xx = np.mgrid[0:h, 0:w]
    for _ in range(n if n is not None else rnd.randint(1, 4)):
        cy, cx = rnd.uniform(-2, h + 1), rnd.uniform(-2, w + 1)
        ry, rx = rnd.uniform(0.5, h / 2 + 1), rnd.uniform(0.5, w / 2 + 1)
        if rnd.random() < 0.6:
            m |= (((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2 <= 1).astype(np.uint8)
        else:
            m |= ((abs(yy - cy) <= ry) & (abs(xx - cx) <= rx)).astype(np.uint8)
    return m


def noise(rnd, h, w, p):
    return np.array([[1 if rnd.random() < p else 0 for _ in range(w)] for _ in range(h)], np.uint8)


def gen_masks(rnd):
    masks = []                                  # (name, mask)
    add = masks.append
    add(("1x1 unset", np.zeros((1, 1), np.uint8)))
    add(("1x1 set", np.ones((1, 1), np.uint8)))
    for n in (2, 7, 33):
        add(("1x%d noise" % n, noise(rnd, 1, n, 0.5)))
        add(("%dx1 noise" % n, noise(rnd, n, 1, 0.5)))
    add(("1x9 set", np.ones((1, 9), np.uint8)))
    add(("9x1 set", np.ones((9, 1), np.uint8)))
    for h, w in ((3, 4), (7, 5), (64, 64), (1, 40)):
        add(("%dx%d empty" % (h, w), np.zeros((h, w), np.uint8)))
        add(("%dx%d full" % (h, w), np.ones((h, w), np.uint8)))
    for h, w in ((5, 5), (6, 7), (7, 6), (4, 4), (1, 6), (6, 1), (13, 11)):
        for par in (0, 1):
            yy, xx = np.mgrid[0:h, 0:w]
            add(("%dx%d checkerboard %d" % (h, w, par), ((yy + xx + par) % 2).astype(np.uint8)))
    for h, w in ((5, 3), (9, 9), (12, 17)):
        m = noise(rnd, h, w, 0.4)
        m[0, 0] = 1
        add(("%dx%d first pixel set" % (h, w), m.copy()))
        m[0, 0] = 0
        add(("%dx%d first pixel unset" % (h, w), m.copy()))
        m[-1, -1] = 1
        add(("%dx%d last pixel set" % (h, w), m.copy()))
    # runs of 1 that wrap from the bottom of a column into the next one
    for h, w, a, b in ((8, 6, 13, 19), (8, 6, 7, 9), (5, 9, 12, 30), (10, 10, 9, 11), (6, 4, 5, 6)):
        f = np.zeros(h * w, np.uint8)
        f[a:b] = 1
        add(("%dx%d wrapping run %d..%d" % (h, w, a, b), f.reshape((h, w), order="F")))
    # whole columns, a mask ending in zeros, one ending in ones
    m = np.zeros((7, 9), np.uint8)
    m[:, 2:5] = 1
    add(("7x9 three whole columns", m))
    m = np.zeros((7, 9), np.uint8)
    m[2:4, 1] = 1
    m[5, 3] = 1
    add(("7x9 ends in zeros", m))
    m = np.zeros((7, 9), np.uint8)
    m[3:, 8] = 1
    add(("7x9 ends in ones", m))
    m = np.zeros((7, 9), np.uint8)
    m[6, 4] = 1
    add(("7x9 one pixel at a column's bottom", m))
    for i in range(24):
        h, w = rnd.randint(2, 40), rnd.randint(2, 40)
        add(("%dx%d blobs %d" % (h, w, i), blob(rnd, h, w)))
    for i in range(10):
        h, w = rnd.randint(1, 16), rnd.randint(1, 16)
        add(("%dx%d noise %d" % (h, w, i), noise(rnd, h, w, rnd.choice([0.1, 0.5, 0.9]))))
    for i in range(3):
        add(("64x64 blobs %d" % i, blob(rnd, 64, 64, 3)))
    add(("63x47 blobs", blob(rnd, 63, 47, 2)))
    return masks


def record_masks(masks):
    cases = []
    for name, m in masks:
        h, w = m.shape
        s, cnts = encode(m)
        r = {"size": [h, w], "counts": s.encode()}
        dec = M.decode(r)
        assert (dec == m).all()
        cases.append({"name": name, "h": h, "w": w, "bits": hexbits(m), "counts": cnts, "string": s,
                      "area": int(M.area(r)), "bbox": floats(M.toBbox(r))})
    return cases


def record_odd_counts():
    """Counts pycocotools takes as they are (crowd annotations are such
    lists): zero-length runs inside, an empty last run of 1, sums that miss
    or pass h * w.  area and toBbox as pycocotools computes them."""
    sets = [
        (3, 4, [12, 0]), (3, 4, [5, 0]), (3, 4, [5, 0, 7]), (3, 4, [2, 3, 0, 4, 3]),
        (3, 4, [0, 0, 4, 8]), (3, 4, [4, 0, 0, 3, 5]), (3, 4, [0, 12, 0]), (3, 4, [0, 12]),
        (3, 4, [3, 3, 3, 3, 0]), (3, 4, [1, 1]), (3, 4, [2, 2, 2]), (4, 5, [7, 20]),
        (4, 5, [3, 4, 2, 4, 2, 5]), (4, 5, [0, 1, 18, 1]), (5, 3, [4, 2, 0, 0, 1, 8]),
        (5, 3, []), (2, 2, [0]), (2, 2, [4]), (2, 2, [3, 1]), (2, 2, [0, 4]),
    ]
    cases = []
    for h, w, cnts in sets:
        r = rle_of(h, w, cnts)
        assert fr_string(r["counts"].decode()) == cnts
        cases.append({"h": h, "w": w, "counts": cnts, "area": int(M.area(r)), "bbox": floats(M.toBbox(r))})
    return cases


# ---- merge ------------------------------------------------------------------

def record_merge(rnd):
    cases = []

    def add(ms, intersect):
        rles = [M.encode(np.asfortranarray(m)) for m in ms]
        out = M.merge(rles, intersect=intersect)
        cases.append({"intersect": intersect,
                      "in": [{"h": m.shape[0], "w": m.shape[1], "counts": runs(m)} for m in ms],
                      "out": {"h": out["size"][0], "w": out["size"][1],
                              "counts": fr_string(out["counts"].decode()), "area": int(M.area(out))}})

    for i in range(40):
        h, w = rnd.randint(1, 30), rnd.randint(1, 30)
        n = rnd.choice([1, 2, 2, 2, 3, 4])
        kinds = [rnd.choice(["blob", "blob", "noise", "empty", "full", "first"]) for _ in range(n)]
        ms = []
        for k in kinds:
            if k == "blob":
                ms.append(blob(rnd, h, w))
            elif k == "noise":
                ms.append(noise(rnd, h, w, rnd.choice([0.2, 0.5, 0.8])))
            elif k == "empty":
                ms.append(np.zeros((h, w), np.uint8))
            elif k == "full":
                ms.append(np.ones((h, w), np.uint8))
            else:
                m = blob(rnd, h, w)
                m[0, 0] = 1
                ms.append(m)
        add(ms, i % 2)
    # identical, disjoint, complementary
    m = blob(rnd, 12, 9)
    for it in (0, 1):
        add([m, m], it)
        add([m, 1 - m], it)
        add([m, 1 - m, m], it)
    # sizes that differ: pycocotools gives a 0 x 0 mask
    a, b, c = blob(rnd, 6, 8), blob(rnd, 8, 6), blob(rnd, 6, 8)
    for it in (0, 1):
        add([a, b], it)
        add([a, c, b], it)
        add([a, np.zeros((6, 9), np.uint8)], it)
    return cases


# ---- iou --------------------------------------------------------------------

def record_iou(rnd):
    cases = []

    def add_masks(dts, gts, crowd):
        dr = [M.encode(np.asfortranarray(m)) for m in dts]
        gr = [M.encode(np.asfortranarray(m)) for m in gts]
        o = M.iou(dr, gr, crowd)
        cases.append({"dt": [{"h": m.shape[0], "w": m.shape[1], "counts": runs(m)} for m in dts],
                      "gt": [{"h": m.shape[0], "w": m.shape[1], "counts": runs(m)} for m in gts],
                      "iscrowd": crowd, "iou": floats(o)})

    def shifted(m, dy, dx):
        out = np.zeros_like(m)
        h, w = m.shape
        ys, xs = slice(max(dy, 0), h + min(dy, 0)), slice(max(dx, 0), w + min(dx, 0))
        yd, xd = slice(max(-dy, 0), h + min(-dy, 0)), slice(max(-dx, 0), w + min(-dx, 0))
        out[ys, xs] = m[yd, xd]
        return out

    for i in range(20):
        h, w = rnd.randint(4, 28), rnd.randint(4, 28)
        gts = [blob(rnd, h, w, rnd.randint(1, 2)) for _ in range(rnd.randint(1, 5))]
        dts = []
        for _ in range(rnd.randint(1, 6)):
            k = rnd.random()
            if k < 0.5:
                dts.append(shifted(rnd.choice(gts), rnd.randint(-2, 2), rnd.randint(-2, 2)))
            elif k < 0.8:
                dts.append(blob(rnd, h, w))
            elif k < 0.9:
                dts.append(np.zeros((h, w), np.uint8))
            else:
                dts.append(noise(rnd, h, w, 0.3))
        crowd = [1 if rnd.random() < 0.3 else 0 for _ in gts]
        add_masks(dts, gts, crowd)
    # hand-made: touching boxes, overlapping boxes but no common pixel, a
    # wrapping run whose box spans all rows, sizes that differ, empty masks
    z = np.zeros((10, 12), np.uint8)
    left, right = z.copy(), z.copy()
    left[2:6, 1:5] = 1
    right[3:8, 5:9] = 1                         # touches left's box: 0 without looking
    diag_a, diag_b = z.copy(), z.copy()
    diag_a[0:5, 0:5] = np.tril(np.ones((5, 5), np.uint8))
    diag_b[0:5, 0:5] = np.triu(np.ones((5, 5), np.uint8), 1)    # same box, no common pixel
    wrap = np.zeros(120, np.uint8)
    wrap[27:33] = 1                             # bottom of column 2 to the top of column 3
    wrap = wrap.reshape((10, 12), order="F")
    mid = z.copy()
    mid[4:6, 2:4] = 1                           # inside wrap's box, not in wrap
    full = np.ones((10, 12), np.uint8)
    other = np.zeros((12, 10), np.uint8)
    other[2:6, 1:5] = 1                         # another size, overlapping boxes: -1
    far = np.zeros((12, 10), np.uint8)
    far[9:12, 8:10] = 1                         # another size, boxes apart: 0
    add_masks([left, right, diag_a, diag_b, wrap, mid, full, z, other, far],
              [left, diag_b, wrap, full, z], [0, 0, 0, 0, 0])
    add_masks([left, right, diag_a, diag_b, wrap, mid, full, z, other, far],
              [left, diag_b, wrap, full, z], [1, 1, 1, 1, 1])
    add_masks([other, far, left], [other, left, far], [0, 1, 0])
    # odd counts: 2.0.11's rleToBbox skips empty runs of 1, so a mask with
    # only such runs has a box beyond the image and meets nothing (not even
    # a mask of another size, which would give -1)
    odd = [(3, 4, [12, 0]), (3, 4, [5, 0, 7]), (3, 4, [2, 3, 0, 4, 3]), (3, 4, [0, 0, 4, 8])]
    plain = [(3, 4, [0, 12]), (4, 3, [0, 12]), (3, 4, [1, 4, 7])]
    for crowd in (0, 1):
        dr = [rle_of(h, w, c) for h, w, c in plain]
        gr = [rle_of(h, w, c) for h, w, c in odd]
        o = M.iou(dr, gr, [crowd] * len(odd))
        cases.append({"dt": [{"h": h, "w": w, "counts": c} for h, w, c in plain],
                      "gt": [{"h": h, "w": w, "counts": c} for h, w, c in odd],
                      "iscrowd": [crowd] * len(odd), "iou": floats(o)})
    return cases


def record_bbox_iou(rnd):
    cases = []

    def add(dt, gt, crowd):
        o = M.iou(dt, gt, crowd)
        cases.append({"dt": dt, "gt": gt, "iscrowd": crowd, "iou": floats(o)})

    def box():
        k = rnd.random()
        if k < 0.6:
            return [round(rnd.uniform(-5, 50), 2), round(rnd.uniform(-5, 50), 2),
                    round(rnd.uniform(0, 30), 2), round(rnd.uniform(0, 30), 2)]
        if k < 0.9:
            return [rnd.randint(0, 40), rnd.randint(0, 40), rnd.randint(0, 20), rnd.randint(0, 20)]
        return [rnd.uniform(0, 40), rnd.uniform(0, 40), rnd.uniform(0, 20), rnd.uniform(0, 20)]

    for _ in range(25):
        gt = [box() for _ in range(rnd.randint(1, 5))]
        dt = [box() for _ in range(rnd.randint(1, 6))]
        dt += [[g[0] + rnd.choice([0, 0.5, 1.25]), g[1], g[2], g[3] + rnd.choice([0, 1])] for g in gt[:2]]
        add(dt, gt, [rnd.choice([0, 0, 1]) for _ in gt])
    # touching, nested, identical, empty
    add([[0, 0, 10, 10], [10, 0, 5, 5], [0, 10, 4, 4], [2, 2, 3, 3], [0, 0, 10, 10], [3, 3, 0, 5]],
        [[0, 0, 10, 10], [10, 10, 1, 1]], [0, 1])
    return cases


# ---- polygons and boxes -----------------------------------------------------

SIZES = [(1, 1), (1, 17), (17, 1), (5, 7), (10, 10), (16, 9), (24, 31), (32, 48), (48, 33), (61, 45),
         (64, 64)]
FRACTIONS = [0.1, 0.3, 0.5, 0.7, 0.9, 0.0, 0.25, 0.75, 0.2, 0.05, 0.95, 0.35, 0.65]


def coord(rnd, lo, hi, style):
    v = rnd.uniform(lo, hi)
    if style == "frac":                         # x.1, x.3, x.5 ...: 5 v + .5 lands on or next to an integer
        return round(math.floor(v) + rnd.choice(FRACTIONS), 2)
    if style == "int":
        return float(round(v))
    if style == "half":
        return math.floor(v) + 0.5
    return round(v, 2)


def polygon(rnd, h, w):
    kind = rnd.choice(["star"] * 8 + ["soup"] * 3 + ["box"] * 2 + ["tiny", "line", "point", "big", "neg"])
    style = rnd.choice(["two", "two", "frac", "frac", "int", "half"])
    k = rnd.randint(3, 12) if rnd.random() < 0.85 else rnd.randint(10, 60)
    pts = []
    if kind == "star":                          # concave, around a centre
        cx, cy = rnd.uniform(-2, w + 2), rnd.uniform(-2, h + 2)
        rmax = rnd.uniform(0.5, max(h, w) * 0.7)
        angles = sorted(rnd.uniform(0, 2 * math.pi) for _ in range(k))
        for a in angles:
            r = rnd.uniform(0.3, 1) * rmax
            pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
        pts = [(coord(rnd, x, x, style) if style != "two" else round(x, 2),
                coord(rnd, y, y, style) if style != "two" else round(y, 2)) for x, y in pts]
    elif kind == "soup":                        # self-intersecting
        pts = [(coord(rnd, -3, w + 3, style), coord(rnd, -3, h + 3, style)) for _ in range(k)]
    elif kind == "box":
        x0, y0 = coord(rnd, -2, w, style), coord(rnd, -2, h, style)
        x1, y1 = coord(rnd, x0, w + 2, style), coord(rnd, y0, h + 2, style)
        pts = [(x0, y0), (x1, y0), (x1, y1), (x0, y1)]
    elif kind == "tiny":                        # smaller than a pixel
        x0, y0 = coord(rnd, 0, w, style), coord(rnd, 0, h, style)
        pts = [(round(x0 + rnd.uniform(-0.4, 0.4), 2), round(y0 + rnd.uniform(-0.4, 0.4), 2)) for _ in range(3)]
    elif kind == "line":                        # collinear, degenerate
        x0, y0 = coord(rnd, 0, w, style), coord(rnd, 0, h, style)
        dx, dy = rnd.choice([(1, 0), (0, 1), (1, 1), (2, -1)])
        pts = [(x0 + dx * t, y0 + dy * t) for t in (0, 1.5, 3, 1)]
    elif kind == "point":                       # every vertex the same
        x0, y0 = coord(rnd, 0, w, style), coord(rnd, 0, h, style)
        pts = [(x0, y0)] * 3
    elif kind == "big":                         # covers the image and more
        pts = [(-3.3, -2.1), (w + 4.7, -1.9), (w + 2.5, h + 3.1), (-1.5, h + 2.9)]
    else:                                       # negative coordinates: (int) truncates towards zero
        pts = [(coord(rnd, -6, 2, style), coord(rnd, -6, h, style)) for _ in range(max(3, k // 2))]
    return [c for p in pts for c in p]


def poly_case(polys, h, w):
    """frPyObjects of an object's polygons, each part's string, and their
    union ("merged", left out for one part: the same string)."""
    rles = M.frPyObjects(polys, h, w)
    c = {"h": h, "w": w, "polys": polys, "strings": [r["counts"].decode() for r in rles]}
    if len(polys) > 1:
        c["merged"] = M.merge(rles)["counts"].decode()
    return c


def record_poly(rnd):
    cases = []
    # one polygon on every size, then objects of several parts
    for i in range(200):
        h, w = SIZES[i % len(SIZES)] if i < 2 * len(SIZES) else rnd.choice(SIZES[3:])
        polys = [polygon(rnd, h, w)]
        while len(polys[0]) <= 4:               # frPyObjects reads a first part of 4 as a box
            polys = [polygon(rnd, h, w)]
        if i >= 120:
            for _ in range(rnd.randint(1, 3)):
                polys.append(polygon(rnd, h, w))
        cases.append(poly_case(polys, h, w))
    # later parts of 2, 3 and 4 coordinates (one or two points), an odd
    # number of coordinates (the last is ignored), exact .5 and .1 vertices
    h, w = 20, 24
    for polys in ([[2, 2, 10, 3, 6, 9], [15, 15]],
                  [[2, 2, 10, 3, 6, 9], [15, 15, 18]],
                  [[2, 2, 10, 3, 6, 9], [15, 15, 18, 4]],
                  [[2, 2, 10, 3, 6, 9, 7]],
                  [[1.5, 1.5, 9.5, 1.5, 9.5, 7.5, 1.5, 7.5]],
                  [[1.1, 1.1, 9.1, 1.1, 9.1, 7.1, 1.1, 7.1]],
                  [[1.3, 1.7, 9.3, 1.7, 9.9, 7.9, 1.3, 7.3]],
                  [[-0.1, -0.1, 3.1, -0.1, 3.1, 3.1]],
                  [[-0.3, 2.0, -3.5, 8.0, 5.5, 8.0]],
                  [[23.5, 0, 24.5, 0, 24.5, 20, 23.5, 20]],
                  [[0, 19.5, 24, 19.5, 24, 20.5, 0, 20.5]],
                  [[0, 0, 24, 0, 24, 20, 0, 20]],
                  [[0, 0, 24, 20, 0, 20, 24, 0]],
                  [[5, 5, 5, 5, 5, 5]],
                  [[3, 3, 12, 3, 12, 12, 3, 12], [6, 6, 9, 6, 9, 9, 6, 9]],
                  [[3, 3, 12, 3, 12, 12, 3, 12], [14, 3, 20, 3, 20, 12]]):
        cases.append(poly_case(polys, h, w))
    return cases


def record_boxes_as_parts(rnd):
    """Objects whose first part has exactly 4 coordinates: frPyObjects means
    to read every part as a box [x, y, w, h] (frBbox), but pycocotools 2.0.11
    raises TypeError there (frBbox wants a numpy array).  Recorded: what
    frBbox gives for those boxes, merged, as data/mask.h specifies."""
    cases = []
    h, w = 30, 40
    for parts in ([[2, 3, 10, 5]], [[2.5, 3.1, 10.3, 5.7], [20, 10, 8, 15]], [[-3, -2, 8, 9], [35, 25, 10, 10]]):
        try:
            M.frPyObjects(parts, h, w)
            raise AssertionError("pycocotools read a 4-coordinate part without error")
        except TypeError:
            pass
        rles = _mask.frBbox(np.array(parts, dtype=np.double), h, w)
        merged = M.merge(rles)
        cases.append({"h": h, "w": w, "polys": parts, "strings": [r["counts"].decode() for r in rles],
                      "merged": merged["counts"].decode()})
    return cases


def record_bbox(rnd):
    cases = []
    boxes = [[0, 0, 1, 1], [0, 0, 0, 0], [2, 3, 4, 5], [2.5, 3.5, 4, 5], [2.1, 3.3, 4.7, 5.9],
             [-3, -3, 5, 5], [-1.5, 2, 100, 3], [30, 20, 5, 5], [0, 0, 24, 20], [-0.1, -0.1, 24.2, 20.2],
             [5, 5, -2, 3], [10.5, 0.5, 0.5, 0.5], [10.45, 0.45, 0.1, 0.1], [23.9, 19.9, 3, 3]]
    for _ in range(40):
        boxes.append([round(rnd.uniform(-4, 26), 2), round(rnd.uniform(-4, 22), 2),
                      round(rnd.uniform(0, 20), 2), round(rnd.uniform(0, 16), 2)])
    for bb in boxes:
        for h, w in ((20, 24), (7, 3)):
            r = _mask.frBbox(np.array([bb], dtype=np.double), h, w)[0]
            cases.append({"h": h, "w": w, "bbox": bb, "string": r["counts"].decode()})
    return cases


# ---- strings ----------------------------------------------------------------

def record_strings(rnd):
    cases = []
    big = [(1 << 16) + 1, (1 << 20) + 5, (1 << 24) - 1, (1 << 28) + 3, (1 << 29) - 1]
    sets = [[0], [1], [15], [16], [31], [32], [1023], [1024], [0, 5], [5, 0, 3],
            [3, 5, 1, 5, 2, 1], [1000, 1, 0, 1, 999], [65535, 65536, 65537], big, big[::-1],
            [7, big[3], 2, big[0], 9, big[4], 1, 0, 1]]
    for _ in range(20):
        n = rnd.randint(1, 30)
        cnts = [rnd.choice([rnd.randint(0, 40), rnd.randint(0, 5000), rnd.randint(0, 1 << 22),
                            rnd.randint(1 << 16, 1 << 27)]) for _ in range(n)]
        sets.append(cnts)
    for cnts in sets:
        total = sum(cnts)
        h, w = (1, total) if rnd.random() < 0.5 else (max(total, 1), 1)
        if rnd.random() < 0.3:
            h, w = 3, 5                         # counts that do not cover h * w
        r = rle_of(h, w, cnts)
        s = r["counts"].decode()
        assert s == to_string(cnts) and fr_string(s) == cnts
        assert int(M.area(r)) == sum(cnts[1::2]) % (1 << 32)
        cases.append({"h": h, "w": w, "counts": cnts, "string": s, "covers": total == h * w})
    return cases


# ---- a COCO file ------------------------------------------------------------

def record_coco(rnd, out_dir):
    images = [{"id": 7, "file_name": "a.jpg", "width": 40, "height": 30},
              {"id": 3, "file_name": "b.jpg", "width": 23, "height": 17},
              {"id": 12, "file_name": "c.jpg", "width": 64, "height": 48}]
    anns = []

    def ann(image, segm, crowd=0):
        a = {"id": 100 + len(anns), "image_id": image["id"], "category_id": 1, "iscrowd": crowd,
             "bbox": [1, 1, 5, 5], "area": 25.0}
        if segm is not None:
            a["segmentation"] = segm
        anns.append(a)

    for im in images:
        h, w = im["height"], im["width"]
        for _ in range(4):
            ann(im, [p for p in (polygon(rnd, h, w) for _ in range(4)) if len(p) > 4][:1] or
                [[1, 1, 5, 1, 5, 5]])
        for _ in range(3):
            parts = [polygon(rnd, h, w) for _ in range(rnd.randint(2, 4))]
            parts[0] = parts[0] if len(parts[0]) > 4 else [1.3, 1.7, 8.1, 2.9, 4.5, 9.5]
            ann(im, parts)
        m = blob(rnd, h, w)
        ann(im, {"counts": runs(m), "size": [h, w]}, 1)
        ann(im, {"counts": encode(blob(rnd, h, w))[0], "size": [h, w]}, 1)
    # RLE of another size than its image: pycocotools keeps the RLE's size
    ann(images[0], {"counts": runs(blob(rnd, 12, 9)), "size": [12, 9]}, 1)
    ann(images[1], {"counts": encode(blob(rnd, 20, 21))[0], "size": [20, 21]}, 1)
    ann(images[2], [[60.5, 40.1, 70.3, 45.9, 62.2, 52.5], [-4.1, -3.3, 10.7, 1.1, 2.5, 9.9]])
    ann(images[0], None)                        # no segmentation: an empty mask of the image's size
    gt = {"images": images, "annotations": anns, "categories": [{"id": 1, "name": "thing"}]}
    path = os.path.join(out_dir, "coco.json")
    with open(path, "w") as f:
        json.dump(gt, f, separators=(",", ":"))
        f.write("\n")
    import contextlib
    import io
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(path)
    cases = []
    for a in anns:
        if "segmentation" not in a:
            continue
        r = coco.annToRLE(coco.anns[a["id"]])
        s = r["counts"] if isinstance(r["counts"], str) else r["counts"].decode()
        cases.append({"id": a["id"], "h": int(r["size"][0]), "w": int(r["size"][1]), "string": s})
    return cases


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    rnd = random.Random(20240611)
    write(os.path.join(out, "masks.json"), record_masks(gen_masks(rnd)))
    write(os.path.join(out, "odd-counts.json"), record_odd_counts())
    write(os.path.join(out, "merge.json"), record_merge(rnd))
    write(os.path.join(out, "iou.json"), record_iou(rnd))
    write(os.path.join(out, "bbox-iou.json"), record_bbox_iou(rnd))
    write(os.path.join(out, "poly.json"), record_poly(rnd) + record_boxes_as_parts(rnd))
    write(os.path.join(out, "bbox.json"), record_bbox(rnd))
    write(os.path.join(out, "strings.json"), record_strings(rnd))
    write(os.path.join(out, "coco-masks.json"), record_coco(rnd, out))


if __name__ == "__main__":
    main()

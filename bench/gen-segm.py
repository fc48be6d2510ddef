#!/usr/bin/env python3
"""gen-segm.py: a COCO val2017-sized instance segmentation set, for
bench/segm-eval.sh (and the masks of bench/rle-ops.py):

  gen-segm.py OUT_DIR [IMAGES] [DETS_PER_IMAGE] [SEED]    (numpy + pycocotools)

writes OUT_DIR/gt.json, ground truth like instances_val2017.json (about 7.3
objects per image of 80 categories, polygons of 1-3 parts and 10-60
vertices, 1% crowd regions as uncompressed RLE), and OUT_DIR/dt.json,
Mask R-CNN-like segm results: DETS_PER_IMAGE per image (default 100), near
the objects or anywhere, each a 28 x 28 soft mask resized bilinearly into
its box, thresholded at 0.5, pasted at image size and encoded by
pycocotools (compressed strings, no "bbox": loadRes then reads the masks).
Images are made in parallel (one process per CPU); the same arguments give
the same files.
"""
import json
import math
import multiprocessing
import os
import random
import sys

import numpy as np
import pycocotools.mask as M

# COCO's 80 category ids
CATS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 27, 28, 31, 32,
        33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59,
        60, 61, 62, 63, 64, 65, 67, 70, 72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90]
SIZES = [(480, 640)] * 6 + [(427, 640), (640, 480), (375, 500), (640, 427), (424, 640), (512, 640)]


def object_box(rnd, h, w):
    """A box of COCO's spread of sizes: small, medium and large objects."""
    side = rnd.choice([rnd.uniform(6, 32), rnd.uniform(32, 96), rnd.uniform(96, min(h, w) * 0.95)])
    bw = min(w - 1, side * rnd.uniform(0.6, 1.6))
    bh = min(h - 1, side * rnd.uniform(0.6, 1.6))
    return [rnd.uniform(0, w - bw), rnd.uniform(0, h - bh), bw, bh]


def polygon_in(rnd, box, k):
    """A star-shaped polygon of k vertices inside a box, 2 decimals."""
    x, y, bw, bh = box
    cx, cy = x + bw / 2, y + bh / 2
    angles = sorted(rnd.uniform(0, 2 * math.pi) for _ in range(k))
    out = []
    for a in angles:
        r = rnd.uniform(0.55, 1.0)
        out += [round(cx + r * bw / 2 * math.cos(a), 2), round(cy + r * bh / 2 * math.sin(a), 2)]
    return out


def object_polygons(rnd, box):
    """An object's segmentation: 1-3 parts of 10-60 vertices (COCO-like)."""
    parts = [polygon_in(rnd, box, rnd.randint(10, 60))]
    for _ in range(rnd.choice([0, 0, 0, 1, 2])):
        x, y, bw, bh = box
        sub = [x + rnd.uniform(0, bw * 0.6), y + rnd.uniform(0, bh * 0.6), bw * rnd.uniform(0.2, 0.4),
               bh * rnd.uniform(0.2, 0.4)]
        parts.append(polygon_in(rnd, sub, rnd.randint(10, 30)))
    return parts


_interp_cache = {}


def interp(n_out, n_in=28):
    """Bilinear weights (n_out x n_in), half-pixel centres, edges clamped."""
    key = (n_out, n_in)
    if key not in _interp_cache:
        m = np.zeros((n_out, n_in))
        for i in range(n_out):
            s = min(max((i + 0.5) * n_in / n_out - 0.5, 0), n_in - 1)
            i0 = int(math.floor(s))
            i1 = min(i0 + 1, n_in - 1)
            f = s - i0
            m[i, i0] += 1 - f
            m[i, i1] += f
        _interp_cache[key] = m
    return _interp_cache[key]


def soft_mask(rng):
    """A 28 x 28 mask head output: a blob with a wobbly edge, in [0, 1]."""
    yy, xx = np.mgrid[0:28, 0:28] / 27.0 - 0.5
    cy, cx = rng.uniform(-0.1, 0.1, 2)
    ry, rx = rng.uniform(0.25, 0.5, 2)
    d = ((yy - cy) / ry) ** 2 + ((xx - cx) / rx) ** 2
    wob = sum(rng.uniform(-0.25, 0.25) * np.cos(rng.uniform(2, 9) * xx + rng.uniform(2, 9) * yy + rng.uniform(0, 6))
              for _ in range(3))
    return 1.0 / (1.0 + np.exp(6.0 * (d - 1.0 + wob)))


def paste(m28, box, h, w, out):
    """Resizes a 28 x 28 soft mask into box [x, y, w, h] (whole pixels),
    thresholds at 0.5 and writes it into out (h x w, zeros elsewhere)."""
    x0, y0 = int(math.floor(box[0])), int(math.floor(box[1]))
    x1, y1 = int(math.ceil(box[0] + box[2])), int(math.ceil(box[1] + box[3]))
    bw, bh = max(x1 - x0, 1), max(y1 - y0, 1)
    xa, ya, xb, yb = max(x0, 0), max(y0, 0), min(x0 + bw, w), min(y0 + bh, h)
    if xa < xb and ya < yb:
        # transposed: out is a column-major slice, out.T is contiguous
        mt = interp(bw)[xa - x0:xb - x0] @ m28.T @ interp(bh)[ya - y0:yb - y0].T
        out.T[xa:xb, ya:yb] = mt >= 0.5


def detection_boxes(rnd, anns, h, w, n):
    """n boxes: most near an object (jittered), the rest anywhere."""
    out = []
    for i in range(n):
        if anns and rnd.random() < 0.7:
            a = rnd.choice(anns)
            x, y, bw, bh = a["bbox"]
            j = rnd.choice([0.03, 0.1, 0.25])
            bw2, bh2 = max(2.0, bw * (1 + rnd.gauss(0, j))), max(2.0, bh * (1 + rnd.gauss(0, j)))
            x2, y2 = x + rnd.gauss(0, j * bw), y + rnd.gauss(0, j * bh)
            cat = a["category_id"] if rnd.random() < 0.8 else rnd.choice(CATS)
        else:
            x2, y2, bw2, bh2 = object_box(rnd, h, w)
            cat = rnd.choice(CATS)
        x2, y2 = min(max(x2, 0), w - 2), min(max(y2, 0), h - 2)
        out.append(([x2, y2, min(bw2, w - x2), min(bh2, h - y2)], cat))
    return out


def gen_image(args):
    """Ground truth and detections of one image (run in a worker)."""
    seed, iid, ndets = args
    rnd = random.Random(seed * 1000003 + iid)
    rng = np.random.RandomState((seed * 7919 + iid) % (1 << 31))
    h, w = rnd.choice(SIZES)
    image = {"id": iid, "file_name": "%012d.jpg" % iid, "width": w, "height": h}
    anns = []
    for _ in range(min(int(rnd.expovariate(1 / 7.3)) + 1, 40)):
        box = object_box(rnd, h, w)
        crowd = rnd.random() < 0.01
        parts = object_polygons(rnd, box)
        rle = M.merge(M.frPyObjects(parts, h, w))
        a = {"image_id": iid, "category_id": rnd.choice(CATS), "iscrowd": int(crowd),
             "area": float(M.area(rle)), "bbox": [round(v, 2) for v in M.toBbox(rle).tolist()]}
        if crowd:
            s = rle["counts"].decode()
            a["segmentation"] = {"counts": fr_string(s), "size": [h, w]}
        else:
            a["segmentation"] = parts
        anns.append(a)
    boxes = detection_boxes(rnd, anns, h, w, ndets)
    masks = np.zeros((h, w, len(boxes)), dtype=np.uint8, order="F")
    for i, (box, _) in enumerate(boxes):
        paste(soft_mask(rng), box, h, w, masks[:, :, i])
    rles = M.encode(masks)
    dets = [{"image_id": iid, "category_id": cat,
             "segmentation": {"size": [h, w], "counts": r["counts"].decode()},
             "score": round(rnd.random(), 5)} for (box, cat), r in zip(boxes, rles)]
    return image, anns, dets


def fr_string(s):
    """rleFrString: counts of a compressed string."""
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


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    out = sys.argv[1]
    nimages = int(sys.argv[2]) if len(sys.argv) > 2 else 5000
    ndets = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    os.makedirs(out, exist_ok=True)
    ids = random.Random(seed).sample(range(1, 600000), nimages)
    with multiprocessing.Pool() as pool:
        results = pool.map(gen_image, [(seed, iid, ndets) for iid in ids], chunksize=8)
    images, anns, dets = [], [], []
    for image, a, d in results:
        images.append(image)
        anns += a
        dets += d
    for i, a in enumerate(anns):
        a["id"] = i + 1
    cats = [{"id": c, "name": "category%d" % c, "supercategory": "thing"} for c in CATS]
    with open(os.path.join(out, "gt.json"), "w") as f:
        json.dump({"info": {"description": "gen-segm.py"}, "images": images, "annotations": anns,
                   "categories": cats, "licenses": []}, f)
    with open(os.path.join(out, "dt.json"), "w") as f:
        json.dump(dets, f)
    print("%d images, %d objects (%d crowd), %d detections" %
          (len(images), len(anns), sum(a["iscrowd"] for a in anns), len(dets)))


if __name__ == "__main__":
    main()

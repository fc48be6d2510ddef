#!/usr/bin/env python3
"""coco-oracle.py: random COCO ground truth and detections, and pycocotools as
the reference evaluation, for the coco-eval tests.

  coco-oracle.py gen-gt SEED OUT.json            random instances file (crowd RLE included)
  coco-oracle.py gen-dets SEED GT.json OUT.json  detections: jittered truth, duplicates,
                                                 false positives, tied scores, > 100 per image
  coco-oracle.py gen-gt-segm SEED OUT.json       random instances with random polygon outlines (several
                                                 parts), crowd blobs as uncompressed RLE, compressed RLE
                                                 objects, the area of the mask as COCO's (needs pycocotools)
  coco-oracle.py gen-segm SEED GT.json OUT.json  mask results: jittered ground truth polygons turned to RLE,
                                                 28x28 masks pasted into boxes, random masks, empty masks,
                                                 crowd-covering masks, tied scores, > 100 per image, images
                                                 without detections (needs pycocotools)
  coco-oracle.py eval GT.json DT.json [TYPE]     pycocotools' 12 numbers as JSON, TYPE bbox (default) or
                                                 segm (needs pycocotools)
"""
import json
import random
import sys


def gen_gt(seed, out):
    rnd = random.Random(seed)
    ncat = rnd.randint(3, 8)
    cat_ids = sorted(rnd.sample(range(1, 91), ncat))
    rnd.shuffle(cat_ids)            # JSON order differs from id order
    images, anns = [], []
    img_ids = rnd.sample(range(1, 100000), rnd.randint(20, 60))
    aid = rnd.randint(1, 1000)
    for iid in img_ids:
        w, h = rnd.randint(200, 640), rnd.randint(200, 640)
        images.append({"id": iid, "file_name": "%012d.jpg" % iid, "width": w, "height": h})
        for _ in range(rnd.choice([0, 1, 2, 3, 5, 8, 12])):
            # sizes spread over small, medium and large
            bw = min(w - 1, rnd.choice([rnd.uniform(2, 30), rnd.uniform(30, 100), rnd.uniform(100, 400)]))
            bh = min(h - 1, bw * rnd.uniform(0.5, 2))
            x, y = rnd.uniform(0, w - bw), rnd.uniform(0, h - bh)
            bbox = [round(x, 2), round(y, 2), round(bw, 2), round(bh, 2)]
            crowd = 1 if rnd.random() < 0.06 else 0
            a = {"id": aid, "image_id": iid, "category_id": rnd.choice(cat_ids), "bbox": bbox,
                 "iscrowd": crowd}
            aid += rnd.randint(1, 3)
            # area from the "segmentation": not the box area, as in COCO
            a["area"] = round(bw * bh * rnd.uniform(0.5, 1.0), 3)
            if crowd:
                n = w * h
                k = rnd.randint(0, n // 2)
                m = rnd.randint(0, n - k)
                a["segmentation"] = {"counts": [k, m, n - k - m], "size": [h, w]}
            else:
                x1, y1 = bbox[0] + bbox[2], bbox[1] + bbox[3]
                a["segmentation"] = [[bbox[0], bbox[1], x1, bbox[1], x1, y1, bbox[0], y1]]
            anns.append(a)
    rnd.shuffle(anns)               # annotations not grouped by image
    cats = [{"id": c, "name": "cat%d" % c, "supercategory": "thing"} for c in cat_ids]
    with open(out, "w") as f:
        json.dump({"info": {"description": "random"}, "images": images, "annotations": anns,
                   "categories": cats, "licenses": []}, f)


def gen_dets(seed, gt_path, out):
    rnd = random.Random(seed)
    gt = json.load(open(gt_path))
    images = {im["id"]: im for im in gt["images"]}
    cats = [c["id"] for c in gt["categories"]]
    dets = []
    for a in gt["annotations"]:
        for _ in range(rnd.choice([0, 1, 1, 1, 2])):
            x, y, w, h = a["bbox"]
            j = rnd.choice([0.0, 0.02, 0.1, 0.3])
            bb = [x + rnd.gauss(0, j * w), y + rnd.gauss(0, j * h), w * (1 + rnd.gauss(0, j)), h * (1 + rnd.gauss(0, j))]
            bb[2], bb[3] = abs(bb[2]), abs(bb[3])
            cat = a["category_id"] if rnd.random() < 0.85 else rnd.choice(cats)
            dets.append({"image_id": a["image_id"], "category_id": cat, "bbox": [round(v, 2) for v in bb],
                         "score": round(rnd.random(), rnd.choice([1, 2, 6]))})   # coarse scores tie
    for iid, im in images.items():
        n = rnd.choice([0, 1, 3, 10, 40]) if rnd.random() < 0.9 else 130       # some past maxDets
        for _ in range(n):
            w = rnd.uniform(1, im["width"] / 2)
            h = rnd.uniform(1, im["height"] / 2)
            dets.append({"image_id": iid, "category_id": rnd.choice(cats),
                         "bbox": [round(rnd.uniform(0, im["width"] - w), 2), round(rnd.uniform(0, im["height"] - h), 2),
                                  round(w, 2), round(h, 2)],
                         "score": round(rnd.random(), rnd.choice([1, 3]))})
    rnd.shuffle(dets)
    if not dets:
        iid = next(iter(images))
        dets.append({"image_id": iid, "category_id": cats[0], "bbox": [1, 1, 5, 5], "score": 0.5})
    with open(out, "w") as f:
        json.dump(dets, f)


def _blob(rnd, h, w, cx, cy, r):
    """A random star-shaped outline around (cx, cy), vertices rounded to 2 decimals."""
    import math
    n = rnd.randint(3, 24)
    pts = []
    for i in range(n):
        a = 2 * math.pi * i / n + rnd.uniform(-0.2, 0.2)
        rr = r * rnd.uniform(0.4, 1.0)
        x = cx + rr * math.cos(a)
        y = cy + rr * math.sin(a)
        if rnd.random() < 0.1:          # vertices on .x5 boundaries and off the image
            x = round(x) + rnd.choice([0.1, 0.3, 0.5, 0.7, 0.9])
        pts += [round(x, 2), round(y, 2)]
    return pts


def gen_gt_segm(seed, out):
    import numpy as np
    import pycocotools.mask as M
    rnd = random.Random(seed)
    ncat = rnd.randint(2, 6)
    cat_ids = sorted(rnd.sample(range(1, 91), ncat))
    rnd.shuffle(cat_ids)
    images, anns = [], []
    aid = rnd.randint(1, 1000)
    for iid in rnd.sample(range(1, 100000), rnd.randint(15, 40)):
        w, h = rnd.randint(40, 320), rnd.randint(40, 320)
        images.append({"id": iid, "file_name": "%012d.jpg" % iid, "width": w, "height": h})
        for _ in range(rnd.choice([0, 1, 2, 3, 5, 8])):
            r = rnd.choice([rnd.uniform(2, 8), rnd.uniform(8, 30), rnd.uniform(30, 120)])
            cx, cy = rnd.uniform(-5, w + 5), rnd.uniform(-5, h + 5)
            crowd = 1 if rnd.random() < 0.08 else 0
            a = {"id": aid, "image_id": iid, "category_id": rnd.choice(cat_ids), "iscrowd": crowd}
            aid += rnd.randint(1, 3)
            if crowd:
                m = np.zeros((h, w), np.uint8)
                for _ in range(rnd.randint(1, 5)):
                    rle = M.frPyObjects([_blob(rnd, h, w, cx + rnd.uniform(-r, r), cy + rnd.uniform(-r, r), r / 2)], h, w)
                    m |= M.decode(M.merge(rle))
                rle = M.encode(np.asfortranarray(m))
                counts, v, n = [], 0, 0
                flat = m.flatten(order="F")
                # uncompressed counts as COCO's crowd annotations carry them
                i = 0
                while i < len(flat):
                    j = i
                    while j < len(flat) and flat[j] == v:
                        j += 1
                    counts.append(j - i)
                    v, i = 1 - v, j
                if not counts or (len(counts) % 2 == 0 and False):
                    counts = [h * w]
                a["segmentation"] = {"counts": counts, "size": [h, w]}
            elif rnd.random() < 0.08:
                # a non-crowd object given as compressed RLE
                m = M.decode(M.merge(M.frPyObjects([_blob(rnd, h, w, cx, cy, r)], h, w)))
                rle = M.encode(np.asfortranarray(m))
                a["segmentation"] = {"counts": rle["counts"].decode(), "size": [h, w]}
                rle["counts"] = rle["counts"]
            else:
                parts = [_blob(rnd, h, w, cx, cy, r)]
                for _ in range(rnd.choice([0, 0, 0, 1, 2])):
                    parts.append(_blob(rnd, h, w, cx + rnd.uniform(-2 * r, 2 * r), cy + rnd.uniform(-2 * r, 2 * r), r / 2))
                a["segmentation"] = parts
            seg = a["segmentation"]
            if isinstance(seg, list):
                rle = M.merge(M.frPyObjects(seg, h, w))
            elif isinstance(seg["counts"], list):
                rle = M.frPyObjects(seg, h, w)
            else:
                rle = {"counts": seg["counts"].encode(), "size": seg["size"]}
            area = float(M.area(rle))
            bb = [float(v) for v in M.toBbox(rle)]
            if area == 0:
                continue        # nothing on the image
            a["area"] = area if rnd.random() < 0.9 else round(area * rnd.uniform(0.8, 1.2), 2)
            a["bbox"] = bb
            anns.append(a)
    rnd.shuffle(anns)
    cats = [{"id": c, "name": "cat%d" % c, "supercategory": "thing"} for c in cat_ids]
    with open(out, "w") as f:
        json.dump({"info": {"description": "random segm"}, "images": images, "annotations": anns,
                   "categories": cats, "licenses": []}, f)


def gen_segm(seed, gt_path, out):
    import numpy as np
    import pycocotools.mask as M
    from pycocotools.coco import COCO
    import contextlib
    import io
    rnd = random.Random(seed)
    nprnd = np.random.RandomState(seed)
    with contextlib.redirect_stdout(io.StringIO()):
        coco = COCO(gt_path)
    images = coco.imgs
    cats = sorted(coco.getCatIds())
    dets = []

    def add(iid, cat, m, score):
        rle = M.encode(np.asfortranarray(m.astype(np.uint8)))
        dets.append({"image_id": iid, "category_id": cat, "score": score,
                     "segmentation": {"size": [int(rle["size"][0]), int(rle["size"][1])],
                                      "counts": rle["counts"].decode()}})

    def score():
        return round(rnd.random(), rnd.choice([1, 2, 6]))     # coarse scores tie

    def pasted(h, w, box):
        # a 28x28 soft mask resized into the box (nearest) and thresholded, as a detector pastes
        x, y, bw, bh = box
        m = np.zeros((h, w), np.uint8)
        x0, y0 = int(max(0, x)), int(max(0, y))
        x1, y1 = int(min(w, x + bw + 1)), int(min(h, y + bh + 1))
        if x1 <= x0 or y1 <= y0:
            return m
        soft = nprnd.rand(28, 28) * 0.5 + 0.35
        yy = np.clip(((np.arange(y0, y1) - y) / max(bh, 1) * 28).astype(int), 0, 27)
        xx = np.clip(((np.arange(x0, x1) - x) / max(bw, 1) * 28).astype(int), 0, 27)
        m[y0:y1, x0:x1] = soft[np.ix_(yy, xx)] > 0.5
        return m

    skip = set(rnd.sample(sorted(images), max(1, len(images) // 8)))    # images without detections
    for a in coco.dataset["annotations"]:
        iid = a["image_id"]
        if iid in skip:
            continue
        im = images[iid]
        h, w = im["height"], im["width"]
        gm = coco.annToMask(a)
        for _ in range(rnd.choice([0, 1, 1, 2])):
            cat = a["category_id"] if rnd.random() < 0.85 else rnd.choice(cats)
            kind = rnd.random()
            if kind < 0.4 and isinstance(a["segmentation"], list):
                j = rnd.choice([0.0, 0.5, 2.0, 6.0])
                parts = [[v + rnd.gauss(0, j) for v in p] for p in a["segmentation"]]
                m = M.decode(M.merge(M.frPyObjects(parts, h, w)))
            elif kind < 0.7:
                x, y, bw, bh = a["bbox"]
                j = rnd.choice([0.0, 0.05, 0.2])
                m = pasted(h, w, [x + rnd.gauss(0, j * bw), y + rnd.gauss(0, j * bh), bw, bh])
            elif kind < 0.9:
                m = gm.copy()
                if m.any():             # erode/dilate a little by shifting
                    m = np.roll(m, rnd.randint(-2, 2), axis=rnd.randint(0, 1))
            else:
                m = np.zeros((h, w), np.uint8)          # an empty mask
            add(iid, cat, m, score())
    for iid, im in images.items():
        if iid in skip:
            continue
        h, w = im["height"], im["width"]
        n = rnd.choice([0, 0, 1, 2]) if rnd.random() < 0.93 else 110      # some past maxDets
        for _ in range(n):
            if rnd.random() < 0.5:
                m = (nprnd.rand(h, w) < rnd.uniform(0.001, 0.3)).astype(np.uint8)    # speckle
            else:
                bw, bh = rnd.uniform(1, w / 2), rnd.uniform(1, h / 2)
                m = pasted(h, w, [rnd.uniform(0, w - bw), rnd.uniform(0, h - bh), bw, bh])
            add(iid, rnd.choice(cats), m, score())
    rnd.shuffle(dets)
    if not dets:
        iid = next(iter(images))
        add(iid, cats[0], np.ones((images[iid]["height"], images[iid]["width"]), np.uint8), 0.5)
    with open(out, "w") as f:
        json.dump(dets, f)


def evaluate(gt_path, dt_path, iou_type="bbox"):
    import contextlib
    import io
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(gt_path)
        dt = gt.loadRes(dt_path)
        e = COCOeval(gt, dt, iouType=iou_type)
        e.evaluate()
        e.accumulate()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        e.summarize()
    print(json.dumps({"stats": [float(x) for x in e.stats], "text": out.getvalue()}))


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "gen-gt":
        gen_gt(int(sys.argv[2]), sys.argv[3])
    elif cmd == "gen-dets":
        gen_dets(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif cmd == "gen-gt-segm":
        gen_gt_segm(int(sys.argv[2]), sys.argv[3])
    elif cmd == "gen-segm":
        gen_segm(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    elif cmd == "eval":
        evaluate(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "bbox")
    else:
        sys.exit(__doc__)

#!/usr/bin/env python3
"""coco-oracle.py: random COCO ground truth and detections, and pycocotools as
the reference evaluation, for the coco-eval tests.

  coco-oracle.py gen-gt SEED OUT.json            random instances file (crowd RLE included)
  coco-oracle.py gen-dets SEED GT.json OUT.json  detections: jittered truth, duplicates,
                                                 false positives, tied scores, > 100 per image
  coco-oracle.py eval GT.json DT.json            pycocotools' 12 numbers as JSON (needs pycocotools)
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


def evaluate(gt_path, dt_path):
    import contextlib
    import io
    from pycocotools.coco import COCO
    from pycocotools.cocoeval import COCOeval
    with contextlib.redirect_stdout(io.StringIO()):
        gt = COCO(gt_path)
        dt = gt.loadRes(dt_path)
        e = COCOeval(gt, dt, iouType="bbox")
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
    elif cmd == "eval":
        evaluate(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)

#!/usr/bin/env python3
"""gen-synth-dets.py: Mask R-CNN-like results for a COCO validation split
(the synthetic shapes' val2017 of benchctl dataset synth), for
bench/maskrcnn-eval.sh:

  gen-synth-dets.py ANNOTATIONS.json OUT.json [DETS_PER_IMAGE] [SEED]   (numpy + pycocotools)

DETS_PER_IMAGE (default 100, as a Mask R-CNN keeps) results per image, each
with a box and a mask, as the evaluation of a trainer sees them: 70% near
a ground-truth object (its box jittered by 3%, 10% or 25%, its category 80%
of the time), the rest anywhere; each mask a 28 x 28 soft mask resized into
the box, thresholded at 0.5 and encoded by pycocotools, as gen-segm.py
makes them (its helpers).  One results list with "bbox" and "segmentation":
loadRes reads it as box results that keep their masks, so pycocotools and
benchctl coco-eval --type both evaluate the same file.
"""
import importlib.util
import json
import os
import random
import sys

import numpy as np
import pycocotools.mask as M

spec = importlib.util.spec_from_file_location("gen_segm", os.path.join(os.path.dirname(__file__), "gen-segm.py"))
gs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gs)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    ndets = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    with open(sys.argv[1]) as f:
        gt = json.load(f)
    gs.CATS = [c["id"] for c in gt["categories"]]   # detection_boxes draws wrong labels from these
    anns = {}
    for a in gt["annotations"]:
        anns.setdefault(a["image_id"], []).append(a)
    dets = []
    for im in gt["images"]:
        iid, h, w = im["id"], im["height"], im["width"]
        rnd = random.Random(seed * 1000003 + iid)
        rng = np.random.RandomState((seed * 7919 + iid) % (1 << 31))
        boxes = gs.detection_boxes(rnd, anns.get(iid, []), h, w, ndets)
        masks = np.zeros((h, w, len(boxes)), dtype=np.uint8, order="F")
        for i, (box, _) in enumerate(boxes):
            gs.paste(gs.soft_mask(rng), box, h, w, masks[:, :, i])
        for (box, cat), r in zip(boxes, M.encode(masks)):
            dets.append({"image_id": iid, "category_id": cat, "bbox": [round(v, 2) for v in box],
                         "score": round(rnd.random(), 5),
                         "segmentation": {"size": [h, w], "counts": r["counts"].decode()}})
    with open(sys.argv[2], "w") as f:
        json.dump(dets, f)
    print("%d images, %d detections" % (len(gt["images"]), len(dets)))


if __name__ == "__main__":
    main()

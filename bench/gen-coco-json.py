#!/usr/bin/env python3
"""gen-coco-json.py: an annotation file shaped like COCO's instances_train2017.json
(118287 images, 860001 annotations with polygon segmentations, a few RLE crowd
regions, 80 categories with ids in 1..90): about 450 MB, written as it goes.

  gen-coco-json.py OUT.json [IMAGES] [ANNOTATIONS]
"""
import json
import random
import sys

out = sys.argv[1]
n_img = int(sys.argv[2]) if len(sys.argv) > 2 else 118287
n_ann = int(sys.argv[3]) if len(sys.argv) > 3 else 860001
rnd = random.Random(1)
cat_ids = sorted(rnd.sample(range(1, 91), 80))
with open(out, "w") as f:
    f.write('{"info": {"description": "COCO-shaped test data", "year": 2017},\n"licenses": [],\n"images": [')
    for i in range(n_img):
        w, h = rnd.choice([(640, 480), (480, 640), (640, 427), (500, 375)])
        f.write('%s\n{"license": 3, "file_name": "%012d.jpg", "coco_url": "http://images.cocodataset.org/train2017/%012d.jpg", '
                '"height": %d, "width": %d, "date_captured": "2013-11-14 11:18:45", "id": %d}'
                % ("," if i else "", i + 1, i + 1, h, w, i + 1))
    f.write('\n],\n"annotations": [')
    for a in range(n_ann):
        img = rnd.randrange(n_img) + 1
        x, y = rnd.uniform(0, 400), rnd.uniform(0, 300)
        w, h = rnd.uniform(2, 240), rnd.uniform(2, 180)
        crowd = rnd.random() < 0.01
        if crowd:
            seg = {"counts": [rnd.randrange(1000) for _ in range(40)], "size": [480, 640]}
            seg["counts"].append(480 * 640 - sum(seg["counts"]))
        else:
            n = rnd.randint(8, 40)
            seg = [[round(rnd.uniform(x, x + w), 2) if k % 2 == 0 else round(rnd.uniform(y, y + h), 2)
                    for k in range(2 * n)]]
        f.write('%s\n{"segmentation": %s, "area": %.4f, "iscrowd": %d, "image_id": %d, "bbox": [%.2f, %.2f, %.2f, %.2f], '
                '"category_id": %d, "id": %d}'
                % ("," if a else "", json.dumps(seg, separators=(",", ":")), w * h * 0.7, crowd, img, x, y, w, h,
                   rnd.choice(cat_ids), a + 1))
    f.write('\n],\n"categories": [')
    f.write(",".join('\n{"supercategory": "thing", "id": %d, "name": "category %d"}' % (c, c) for c in cat_ids))
    f.write("\n]}\n")

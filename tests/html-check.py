#!/usr/bin/python3
# html-check.py PAGE [WORD...]: parses every top-level <svg> of a benchctl
# page as XML (a plot nests one <svg> in another) and prints how many there
# are, whether the page holds a script, and whether each WORD is in it.
import re
import sys
import xml.etree.ElementTree as ET

page = open(sys.argv[1], encoding="utf-8").read()
svgs, depth, start = [], 0, 0
for m in re.finditer(r"<svg\b|</svg>", page):
    if m.group() == "<svg":
        if depth == 0:
            start = m.start()
        depth += 1
    else:
        depth -= 1
        if depth == 0:
            svgs.append(page[start:m.end()])
for s in svgs:
    ET.fromstring(s)
fetched = [w for w in ("http://", "https://") if w in page.replace('xmlns="http://www.w3.org/2000/svg"', "")]
nonfinite = re.findall(r'="[^"]*\b(?:nan|inf)\b[^"]*"', page, re.I)
print(len(svgs), "script" if "<script" in page else "no-script", fetched, nonfinite,
      *[w in page for w in sys.argv[2:]])

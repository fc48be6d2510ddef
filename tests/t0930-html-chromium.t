#!/bin/bash
# HTML reports (client/report/html.h, client/report/svg.h): tests/unit/svg-demo writes a page
# with every plot kind and the table helpers.  Every <svg> in it parses as
# XML (python3's xml.etree), every coordinate is a finite number, the HTML
# tags balance, the page is valid UTF-8 and self-contained (no script, no
# link, nothing fetched) with a print rule.  Where chromium is installed the
# page renders headless to a PNG that holds the plots' colours (decoded with
# zlib and struct alone) and prints to PDF, with no console message; a page
# with a deliberate script error shows that the console check sees one.
. "${srcdir:-.}/tests/lib.sh"
DEMO="$top_builddir/tests/unit/svg-demo"
[ -x "$DEMO" ] || skip_all "tests/unit/svg-demo not built (make check builds it)"
command -v python3 >/dev/null || skip_all "python3 not installed"
tmp=$(mktemp -d)
cleanup() {
    local pid
    # a browser process left behind would be one of ours: its profile is in $tmp
    for pid in $(pgrep -f -- "--user-data-dir=$tmp/" 2>/dev/null); do
        kill -KILL "$pid" 2>/dev/null
    done
    rm -rf "$tmp"
}
trap cleanup EXIT

check "svg-demo writes the page" "$DEMO" "$tmp/page.html"
"$DEMO" - >"$tmp/stdout.html"
check "svg-demo writes the same to standard output with -" cmp "$tmp/stdout.html" "$tmp/page.html"

# ---- structure, without a browser ----
python3 - "$tmp/page.html" > "$tmp/structure" 2>&1 <<'PY'
import html.parser, math, re, sys
import xml.etree.ElementTree as ET

raw = open(sys.argv[1], "rb").read()
try:
    page = raw.decode("utf-8")
    print("utf8 ok")
except UnicodeDecodeError as e:
    print("utf8 %s" % e)
    page = raw.decode("utf-8", "replace")

# each top-level <svg>..</svg>, nested ones (the plot areas) inside it
blocks, pos = [], 0
while True:
    i = page.find("<svg", pos)
    if i < 0:
        break
    depth, end = 0, len(page)
    for m in re.finditer(r"<svg\b|</svg>", page[i:]):
        depth += 1 if m.group(0) == "<svg" else -1
        if depth == 0:
            end = i + m.end()
            break
    blocks.append(page[i:end])
    pos = end
print("svgs %d" % len(blocks))

SVG = "{http://www.w3.org/2000/svg}"
NUMERIC = {"x", "y", "x1", "y1", "x2", "y2", "cx", "cy", "r", "width", "height", "points", "d", "transform",
           "viewBox", "font-size", "stroke-width", "fill-opacity"}
bad_xml, bad_num, texts = [], [], 0
for n, b in enumerate(blocks):
    try:
        root = ET.fromstring(b)
    except ET.ParseError as e:
        bad_xml.append("svg %d: %s" % (n, e))
        continue
    if root.tag != SVG + "svg" or root.find(SVG + "title") is None:
        bad_xml.append("svg %d: no svg element with a title" % n)
    for el in root.iter():
        if el.tag == SVG + "text":
            texts += 1
        for k, v in el.attrib.items():
            if k not in NUMERIC:
                continue
            # finite numbers (written in digits: "nan" and "inf" are not numbers
            # here), path commands in d, transform functions
            for w in re.findall(r"[a-z]+\(|[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|[^\s,()]", v):
                if w[-1].isdigit():
                    ok = math.isfinite(float(w))
                else:
                    ok = w.endswith("(") or (k == "d" and w in "MmLlHhVvZzCcSsQqTtAa")
                if not ok:
                    bad_num.append("svg %d <%s %s=%r>" % (n, el.tag[len(SVG):], k, v[:60]))
                    break
print("xml %s" % ("ok" if not bad_xml else "; ".join(bad_xml[:3])))
print("numbers %s" % ("ok" if not bad_num else "; ".join(bad_num[:3])))
print("texts %d" % texts)

# the HTML around them: tags balance (void elements aside)
VOID = {"meta", "br", "hr", "img", "input", "link", "col", "wbr", "area", "base", "source"}
class Balance(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack, self.errors = [], []
    def handle_starttag(self, tag, attrs):
        if tag not in VOID:
            self.stack.append(tag)
    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append("</%s> with %s open" % (tag, self.stack[-3:]))
        else:
            self.stack.pop()
p = Balance()
p.feed(page)
p.close()
if p.stack:
    p.errors.append("never closed: %s" % p.stack)
print("html %s" % ("ok" if not p.errors else "; ".join(p.errors[:3])))

# self-contained: nothing to run, nothing to fetch (the SVG namespace is a name, not a fetch)
stripped = page.replace('xmlns="http://www.w3.org/2000/svg"', "")
found = [w for w in ("<script", "<link", "<img", "<iframe", "src=", "href=", "url(", "@import", "http:", "https:")
         if w in stripped.lower()]
print("contained %s" % ("ok" if not found else " ".join(found)))
print("print-rule %s" % ("ok" if "@media print" in page else "missing"))
print("charset %s" % ("ok" if '<meta charset="utf-8">' in page else "missing"))
# what the demo put in: escaped markup, the replacement character, cells that failed
want = ["&lt;demo&gt;", "\ufffd", ">OOM<", ">failed<", ">no data<", 'class="num"']
missing = [w for w in want if w not in page]
print("content %s" % ("ok" if not missing else "missing " + " ".join(missing)))
PY
field() { sed -n "s/^$1 //p" "$tmp/structure"; }
if ! grep -q '^utf8 ' "$tmp/structure"; then
    _t_result 1 "the structure check ran"
    sed 's/^/#   /' "$tmp/structure" | tail -10
fi
is "the page is valid UTF-8" "$(field utf8)" ok
svgs=$(field svgs)
like "at least ten plots ($svgs)" "${svgs:-0}" '^([1-9][0-9]+)$'
is "every <svg> is well-formed XML with a title" "$(field xml)" ok
is "every coordinate is a finite number" "$(field numbers)" ok
like "the plots are labelled ($(field texts) texts)" "$(field texts)" '^[0-9]{3,}$'
is "the HTML tags balance" "$(field html)" ok
is "self-contained: no script, link, image or URL" "$(field contained)" ok
is "a print rule" "$(field print-rule)" ok
is "charset utf-8" "$(field charset)" ok
is "escaped markup, U+FFFD, failed cells, no data, numeric cells" "$(field content)" ok

# ---- rendering ----
CHROMIUM=${CHROMIUM:-$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)}
if [ -z "$CHROMIUM" ]; then
    skip 6 "chromium not installed (apt-get install chromium)"
    done_testing
    exit
fi

# render NAME PAGE ARGS...: headless chromium on file://PAGE with a private
# profile and home; its log (console messages included) in $tmp/NAME.log
render() {
    local name=$1 page=$2; shift 2
    mkdir -p "$tmp/home"
    HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/.config" XDG_CACHE_HOME="$tmp/home/.cache" \
        timeout -k 5 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-dev-shm-usage \
        --hide-scrollbars --no-first-run --no-default-browser-check --disable-extensions --disable-sync \
        --disable-background-networking --disable-component-update --mute-audio \
        --user-data-dir="$tmp/profile-$name" --enable-logging=stderr --v=0 \
        "$@" "file://$page" >"$tmp/$name.log" 2>&1
}
# console messages about PAGE in LOG: "[...:INFO:CONSOLE:12] "msg", source: file://... (12)"
# (older builds: "INFO:CONSOLE(12)")
console() { grep -E 'CONSOLE[:(]' "$1" | grep -F "file://$2" || true; }

cat >"$tmp/bad.html" <<'EOF'
<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>bad</title></head>
<body><p>x</p><script>undefined_fn();</script></body></html>
EOF
render bad "$tmp/bad.html" --screenshot="$tmp/bad.png" --window-size=400,300
like "the console check sees a script error" "$(console "$tmp/bad.log" "$tmp/bad.html")" 'undefined_fn'

render page "$tmp/page.html" --screenshot="$tmp/page.png" --window-size=1200,6000 --force-device-scale-factor=0.5
rc=$?
is "chromium renders the page" "$rc" 0
[ "$rc" -eq 0 ] || grep -v -e dbus -e 'unexpected operator' "$tmp/page.log" | tail -5 | sed 's/^/#   /'
is "no console message about the page" "$(console "$tmp/page.log" "$tmp/page.html")" ""

# The screenshot decoded with zlib and struct (no imaging library): mostly
# white paper, but a good share drawn, in the palette's blue (bars), the
# second series' orange, both ends of the heat map's scale and its grey.
python3 - "$tmp/page.png" > "$tmp/pixels" 2>&1 <<'PY'
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
if data[:8] != b"\x89PNG\r\n\x1a\n":
    sys.exit("not a PNG")
pos, idat = 8, []
while pos < len(data):
    n, typ = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    pos += 12 + n
    if typ == b"IHDR":
        w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", body)
    elif typ == b"IDAT":
        idat.append(body)
if depth != 8 or ctype not in (2, 6) or interlace:
    sys.exit("unexpected PNG format: depth %d colour type %d interlace %d" % (depth, ctype, interlace))
raw = zlib.decompress(b"".join(idat))
bpp = 3 if ctype == 2 else 4
stride = w * bpp
prev = bytearray(stride)
counts = {}
for y in range(h):
    start = y * (stride + 1)
    f, line = raw[start], bytearray(raw[start + 1:start + 1 + stride])
    if f == 1:
        for i in range(bpp, stride):
            line[i] = (line[i] + line[i - bpp]) & 255
    elif f == 2:
        line = bytearray((a + b) & 255 for a, b in zip(line, prev))
    elif f == 3:
        for i in range(stride):
            line[i] = (line[i] + ((line[i - bpp] if i >= bpp else 0) + prev[i]) // 2) & 255
    elif f == 4:
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], (prev[i - bpp] if i >= bpp else 0)
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    for i in range(0, stride, bpp):
        k = bytes(line[i:i + 3])
        counts[k] = counts.get(k, 0) + 1
    prev = line
total = w * h
drawn = sum(n for k, n in counts.items() if min(k) < 240)
def near(rgb, tol):
    return sum(n for k, n in counts.items() if all(abs(k[j] - rgb[j]) <= tol for j in range(3)))
print("size %dx%d" % (w, h))
print("drawn %.1f" % (100.0 * drawn / total))
print("colours %d" % len(counts))
# (orange only draws thin lines and small dots: blended with white at this scale)
for name, rgb, tol, least in (("blue", (0x00, 0x72, 0xb2), 12, 1000), ("orange", (0xe6, 0x9f, 0x00), 40, 50),
                              ("purple", (0x44, 0x01, 0x54), 12, 100), ("yellow", (0xfd, 0xe7, 0x25), 12, 30),
                              ("grey", (0xc4, 0xc4, 0xc4), 2, 500)):
    n = near(rgb, tol)
    print("%s %s" % (name, "ok" if n >= least else "%d pixels, want %d" % (n, least)))
PY
pix() { sed -n "s/^$1 //p" "$tmp/pixels"; }
if [ -z "$(pix size)" ]; then
    _t_result 1 "the screenshot decodes"
    sed 's/^/#   /' "$tmp/pixels" | tail -5
else
    drawn=$(pix drawn) colours=$(pix colours)
    ok=$(awk -v d="$drawn" -v c="$colours" 'BEGIN { print (d >= 2 && d <= 60 && c >= 50) ? "ok" : "no" }')
    is "the screenshot is drawn, not blank ($(pix size), $drawn% not white, $colours colours)" "$ok" ok
    is "the plots' colours are on it: $(tr '\n' ' ' <"$tmp/pixels" | sed 's/size.*colours [0-9]* //')" \
        "$(pix blue) $(pix orange) $(pix purple) $(pix yellow) $(pix grey)" "ok ok ok ok ok"
fi

render pdf "$tmp/page.html" --no-pdf-header-footer --print-to-pdf="$tmp/page.pdf"
pages=$(grep -ac '/Type */Page\b' "$tmp/page.pdf" 2>/dev/null)
like "it prints: a PDF of several pages (${pages:-0})" "$(head -c 5 "$tmp/page.pdf" 2>/dev/null) ${pages:-0}" \
    '^%PDF- ([3-9]|[1-9][0-9]+)$'
done_testing

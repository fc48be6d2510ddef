#!/bin/bash
# benchctl weights fetch, without the internet: torchvision's ResNet-34 and
# ResNet-50 (random weights, Debian's torch: their names and shapes) saved
# as torchvision names its files (NAME-<first 8 hex of the SHA-256>.pth),
# served by a loopback server (tests/range-server.py) under the site's own
# tables of those names (~/.config/benchd/fetch/): fetched into the
# system's paths.pretrained, the digest checked, converted, loaded by
# benchd-ssd and benchd-maskrcnn --pretrained; a second fetch reuses the
# file; a file whose digest is not its name's refused; --from; a table
# naming resnet50 that serves a resnet34 refused; an unknown name.
. "${srcdir:-.}/tests/lib.sh"
own_servers
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    skip_all "/usr/bin/python3 has no torch/torchvision (Debian python3-torch, python3-torchvision)"
export HOME="$tmp/home"
mkdir -p "$HOME/.config/benchd/fetch" "$tmp/srv"
/usr/bin/python3 - "$tmp/srv" <<'PY' >/dev/null
import hashlib, os, sys, torch, torchvision
d = sys.argv[1]
torch.manual_seed(3)
for arch in ("resnet34", "resnet50"):
    tmp = os.path.join(d, arch + ".tmp")
    torch.save(getattr(torchvision.models, arch)().state_dict(), tmp)
    h = hashlib.sha256(open(tmp, "rb").read()).hexdigest()
    os.rename(tmp, os.path.join(d, "%s-%s.pth" % (arch, h[:8])))
PY
/usr/bin/python3 "$srcdir/tests/range-server.py" "$tmp/srv" --port-file "$tmp/port" --log "$tmp/log" &
pids+=("$!")
wait_until 20 test -s "$tmp/port"
url=http://127.0.0.1:$(cat "$tmp/port")
table() {   # table ARCH FILE [SHA256]: the site's table of ARCH serving FILE
    local f=$2 sum=${3:-${2#*-}}
    sum=${sum%.pth}
    printf '{ "name": "%s", "kind": "weights", "output": "%s.bdw", "files": [ { "name": "%s", "url": "%s/%s",
      "sha256": "%s", "source": "the test" } ] }\n' "$1" "$1" "$f" "$url" "$f" "$sum" > "$HOME/.config/benchd/fetch/$1.json"
}
r34=$(cd "$tmp/srv" && ls resnet34-*.pth) r50=$(cd "$tmp/srv" && ls resnet50-*.pth)
table resnet34 "$r34"
table resnet50 "$r50"
pre=$HOME/.local/share/benchd/pretrained     # the local system's paths.pretrained

out=$("$BENCHCTL" weights fetch resnet34 2>"$tmp/err"); rc=$?
is "weights fetch resnet34: exit 0" "$rc" 0
like "  verified, converted where the local system looks, for the SSD trainer" "$out" \
    "^resnet34: $pre/$r34 verified \(SHA-256 [0-9a-f]{8}\), converted to $pre/resnet34.bdw: 182 tensors, 21.8M parameters; for benchd-ssd"
check "  the state dict kept beside it" test -f "$pre/$r34"
like "  weights check reads what it wrote" "$("$BENCHCTL" weights check "$pre/resnet34.bdw")" "resnet34"
out=$("$BENCHCTL" weights fetch resnet50 -o "$tmp/w" 2>&1); rc=$?
is "weights fetch resnet50 -o DIR: exit 0" "$rc" 0
like "  for Mask R-CNN" "$out" "^resnet50: $tmp/w/$r50 verified .*converted to $tmp/w/resnet50.bdw: .*benchd-maskrcnn"
n=$(grep -c '^GET' "$tmp/log")
out=$("$BENCHCTL" weights fetch resnet50 -o "$tmp/w" 2>&1); rc=$?
is "again: exit 0" "$rc" 0
is "  nothing fetched again" "$(grep -c '^GET' "$tmp/log")" "$n"
flip_byte "$tmp/w/$r50" 1000
out=$("$BENCHCTL" weights fetch resnet50 -o "$tmp/w" 2>&1); rc=$?
is "a damaged copy where the file goes: exit 1" "$rc" 1
like "  checked, not taken" "$out" "$r50: SHA-256 of '$tmp/w/$r50' is [0-9a-f]{64}, the published [0-9a-f]{8}: not the published file \(remove it to fetch it again\)"

SSD=$top_builddir/benchd-ssd MR=$top_builddir/benchd-maskrcnn
if [ -x "$SSD" ]; then
    out=$("$SSD" --synthetic --batch-size 2 --image-size 64 --backbone resnet34 --threads 1 --loader-workers 1 \
          --max-steps 1 --seed 1 --pretrained "$pre/resnet34.bdw" 2>&1); rc=$?
    is "benchd-ssd --pretrained what it fetched: exit 0" "$rc" 0
    like "  its backbone loaded" "$out" "^# pretrained backbone: 145 tensors from '$pre/resnet34.bdw' \($r34\), 37 not used$"
else
    skip 2 "benchd-ssd not built"
fi
if [ -x "$MR" ]; then
    out=$("$MR" --synthetic --config small --backbone resnet50 --frozen-bn 1 --ims-per-batch 1 --threads 1 \
          --seed 1 --max-steps 1 --pretrained "$tmp/w/resnet50.bdw" 2>&1); rc=$?
    is "benchd-maskrcnn --pretrained what it fetched: exit 0" "$rc" 0
    like "  its backbone loaded" "$out" "^# pretrained backbone: 265 tensors from '$tmp/w/resnet50.bdw' \($r50\), 2 not used$"
else
    skip 2 "benchd-maskrcnn not built"
fi

# a file whose SHA-256 does not begin as its name says
table resnet34 "$r34" 00000000
out=$("$BENCHCTL" weights fetch resnet34 -o "$tmp/bad" 2>&1); rc=$?
is "a digest other than the published one: exit 1" "$rc" 1
like "  named, with both" "$out" "weights fetch: $r34: sha256 is [0-9a-f]{64}, the published 00000000: not the published file"
check "  nothing left" test ! -e "$tmp/bad/$r34" -a ! -e "$tmp/bad/resnet34.bdw"
# --from: on disk already
table resnet34 "$r34"
out=$("$BENCHCTL" weights fetch resnet34 --from "$tmp/srv/$r34" -o "$tmp/from" 2>&1); rc=$?
is "--from FILE: exit 0" "$rc" 0
like "  converted" "$out" "^resnet34: $tmp/srv/$r34 verified .*converted to $tmp/from/resnet34.bdw"
# a table of resnet50 serving a resnet34
table resnet50 "$r34"
out=$("$BENCHCTL" weights fetch resnet50 -o "$tmp/wrong" 2>&1); rc=$?
is "resnet50's table serving a resnet34: exit 1" "$rc" 1
like "  said" "$out" "holds resnet34, not torchvision's resnet50"
check "  not converted" test ! -e "$tmp/wrong/resnet50.bdw"
out=$("$BENCHCTL" weights fetch vgg16 2>&1); rc=$?
is "an unknown name: exit 2" "$rc" 2
like "  the known ones named" "$out" "no weights 'vgg16' \(known: resnet34, resnet50\)"
done_testing

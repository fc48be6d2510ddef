#!/bin/bash
# benchctl weights check | convert: state dicts that Debian's torch saves
# (torchvision's ResNet-34 and ResNet-50 with random weights: the names and
# shapes of the ImageNet files), in the zip format and the legacy one, in
# half precision, bfloat16 and float64, with views, strides and storage
# offsets, wrapped as a DataParallel checkpoint: the C converter writes the
# bytes trainer/tools/convert-torchvision.py writes, check names the
# ResNet and the trainers that take it, and the trainers load what it
# wrote.  Damaged files, a forbidden global and files of another kind are
# refused in one line naming the file, and leave no output behind.
# (The parsers on hand-made bytes: test-ptweights; fuzzed: fuzz-ptload.)
. "${srcdir:-.}/tests/lib.sh"
CONV=$srcdir/trainer/tools/convert-torchvision.py
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null ||
    skip_all "/usr/bin/python3 has no torch/torchvision (Debian python3-torch, python3-torchvision)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# the state dicts, then convert-torchvision.py's files from them (its main(),
# in this one process: one import of torch, not one per file)
long=$(printf 'x%.0s' {1..80})
/usr/bin/python3 - "$tmp" "$CONV" "$long" <<'PY' >/dev/null
import collections, importlib.util, os, struct, sys, torch, torchvision
d, conv_path, long_source = sys.argv[1:4]
torch.manual_seed(5)
r34 = torchvision.models.resnet34().state_dict()
torch.save(r34, d + "/r34.pth")
torch.save(r34, d + "/r34-legacy.pth", _use_new_zipfile_serialization=False)
torch.save(torchvision.models.resnet50().state_dict(), d + "/r50.pth")
r18 = torchvision.models.resnet18().state_dict()
fl = lambda sd, t: {k: v.to(t) if v.is_floating_point() else v for k, v in sd.items()}
torch.save(fl(r18, torch.float16), d + "/r18-half.pth")
torch.save(fl(r18, torch.bfloat16), d + "/r18-bf16-legacy.pth", _use_new_zipfile_serialization=False)
torch.save(fl(r18, torch.float64), d + "/r18-f64.pth")
torch.save({"epoch": 90, "state_dict": {"module." + k: v for k, v in r18.items()}}, d + "/r18-ddp.pth")
# views into one storage, at offsets, transposed, strided, expanded, empty
big = torch.randn(4000)
s = collections.OrderedDict()
s["view"] = big[10:40].view(5, 6)
s["t"] = big[100:124].view(4, 6).t()
s["step"] = big[200:300:7]
s["exp"] = big[500:503].view(3, 1).expand(3, 4)
s["scalar"] = big[999]
s["empty"] = big[0:0].view(0, 5)
s["count"] = torch.tensor(3)
s["half"] = torch.tensor([float("nan"), float("inf"), -0.0, 1e-7, 65504], dtype=torch.float16)
for fmt, zipfmt in (("zip", True), ("legacy", False)):
    torch.save(s, "%s/strided-%s.pth" % (d, fmt), _use_new_zipfile_serialization=zipfmt)

class Evil:
    def __reduce__(self):
        return (os.system, ("echo pwned",))
torch.save({"w": torch.zeros(2), "x": Evil()}, d + "/evil.pth")
torch.save({"x": Evil()}, d + "/evil-legacy.pth", _use_new_zipfile_serialization=False)
torch.save(torch.nn.Linear(2, 2), d + "/module.pth")        # a whole module, not a state dict
# a central directory entry whose local header offset is wrong
b = bytearray(open(d + "/r18-half.pth", "rb").read())
i = b.rfind(b"PK\x01\x02")
b[i + 42:i + 46] = struct.pack("<I", 12345)
open(d + "/badcd.pth", "wb").write(b)

spec = importlib.util.spec_from_file_location("convert_torchvision", conv_path)
conv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conv)
def py(name, out, *args):
    sys.argv = ["convert-torchvision.py", "%s/%s.pth" % (d, name), "%s/%s.py.bdw" % (d, out)] + list(args)
    conv.main()
for name in ("r34", "r34-legacy", "r18-half", "r18-bf16-legacy", "r18-f64", "strided-zip", "strided-legacy"):
    py(name, name)
py("r18-ddp", "r18-ddp", "--strip", "module.", "--source", "a DataParallel checkpoint")
py("r18-half", "r18-half-src", "--source", long_source)
PY
is "torch wrote the state dicts, convert-torchvision.py converted them" "$?" 0

# ---- the same bytes as convert-torchvision.py ----------------------------------------------
same() {   # same NAME OUT [options]: benchctl's OUT.c.bdw from NAME.pth is the Python converter's OUT.py.bdw
    local name=$1 to=$2 out; shift 2
    out=$("$BENCHCTL" weights convert "$tmp/$name.pth" "$tmp/$to.c.bdw" "$@" 2>&1)
    if cmp -s "$tmp/$to.c.bdw" "$tmp/$to.py.bdw"; then
        _t_result 0 "$name $*: byte-identical to convert-torchvision.py"
    else
        _t_result 1 "$name $*: byte-identical to convert-torchvision.py"
        printf '%s\n' "$out" | sed 's/^/#   /'
        cmp "$tmp/$to.c.bdw" "$tmp/$to.py.bdw" 2>&1 | sed 's/^/#   /'
    fi
}
out=$("$BENCHCTL" weights convert "$tmp/r34.pth" "$tmp/r34.bdw"); rc=$?
is "convert resnet34 (zip): exit 0" "$rc" 0
is "  says what it wrote and left out" "$out" \
   "weights convert: 182 tensors written to $tmp/r34.bdw (36 integer tensors left out)"
for name in r34 r34-legacy r18-half r18-bf16-legacy r18-f64 strided-zip strided-legacy; do
    same "$name" "$name"
done
same r18-ddp r18-ddp --strip module. --source "a DataParallel checkpoint"
same r18-half r18-half-src --source "$long"
check "convert resnet50" "$BENCHCTL" weights convert "$tmp/r50.pth" "$tmp/r50.c.bdw"

# ---- check -------------------------------------------------------------------------------
out=$("$BENCHCTL" weights check "$tmp/r34.pth"); rc=$?
is "check resnet34: exit 0" "$rc" 0
like "  the zip format" "$out" "^format +PyTorch zip archive \(torch >= 1.6\), pickle protocol 2"
like "  its tensors by type" "$out" "^tensors +218: 182 float32, 36 int64"
like "  torchvision's parameter count" "$out" "^parameters +21797672 "
like "  the architecture" "$out" "^architecture +resnet34: BasicBlock, 3-4-6-3 blocks, width 64, fc 1000 classes$"
like "  benchd-ssd takes it, its default backbone" "$out" "^trainers +benchd-ssd --pretrained \(ssd: its default backbone"
like "  benchd-maskrcnn with --backbone resnet34" "$out" \
     "^ +benchd-maskrcnn --backbone resnet34 --pretrained \(maskrcnn, fasterrcnn"
out=$("$BENCHCTL" weights check "$tmp/r34-legacy.pth")
like "check legacy resnet34: the legacy format" "$out" "^format +PyTorch legacy file \(torch < 1.6\)"
like "  resnet34" "$out" "^architecture +resnet34: "
out=$("$BENCHCTL" weights check "$tmp/r50.pth")
like "check resnet50: Bottleneck 3-4-6-3" "$out" "^architecture +resnet50: Bottleneck, 3-4-6-3 blocks, width 64"
like "  benchd-maskrcnn takes it, its default backbone" "$out" \
     "^trainers +benchd-maskrcnn --pretrained \(maskrcnn, fasterrcnn: its default backbone"
unlike "  benchd-ssd does not" "$out" "benchd-ssd"
like "  25557032 parameters" "$out" "^parameters +25557032 "
json=$("$BENCHCTL" weights check "$tmp/r34.bdw" --json)
is "check --json of the converted file" "$(/usr/bin/python3 -c 'import json, sys
j = json.load(sys.stdin)
print(j["format"], j["source"], j["tensors"], j["architecture"]["name"], j["architecture"]["blocks"],
      [t["program"] for t in j["trainers"]], j["parameters"], j["tensor_list"][0])' <<<"$json")" \
   "bdw r34.pth 182 resnet34 [3, 4, 6, 3] ['benchd-ssd', 'benchd-maskrcnn'] 21797672 {'name': 'conv1.weight', 'dtype': 'float32', 'shape': [64, 3, 7, 7], 'contiguous': True}"
out=$("$BENCHCTL" weights check "$tmp/r18-ddp.pth")
like "a DataParallel checkpoint: its 'state_dict' entry" "$out" "^state dict +its 'state_dict' entry"
like "  resnet18 under 'module.', to strip" "$out" \
     "^trainers +none: its names are under 'module.' \(convert with --strip 'module.'\)"
out=$("$BENCHCTL" weights check "$tmp/r18-ddp.c.bdw")
like "  converted with --strip: the trainers take it" "$out" "^trainers +benchd-ssd --backbone resnet18"
out=$("$BENCHCTL" weights check "$tmp/strided-legacy.pth" --tensors)
like "--tensors: a transposed view is strided" "$out" "^  t +float32 +\(6, 4\) \(strided\)$"
like "  an integer scalar" "$out" "^  count +int64 +\(\)$"
like "  no ResNet, no trainer" "$out" "^trainers +none: no ResNet$"

# ---- refused in one line -----------------------------------------------------------------
refused() {   # refused DESCRIPTION PATTERN FILE: check and convert both exit 1 naming FILE
    local desc=$1 pat=$2 file=$3 err rc
    err=$("$BENCHCTL" weights check "$file" 2>&1 >/dev/null); rc=$?
    is "$desc: exit 1" "$rc" 1
    like "  names the file and why" "$err" "^benchctl: weights check: .*${file##*/}: $pat"
    is "  in one line" "$(printf '%s\n' "$err" | wc -l)" 1
    echo previous > "$tmp/out.bdw"
    err=$("$BENCHCTL" weights convert "$file" "$tmp/out.bdw" 2>&1 >/dev/null); rc=$?
    is "  convert: exit 1, the output as it was" "$rc:$(cat "$tmp/out.bdw")" "1:previous"
}
head -c 40000000 "$tmp/r34.pth" > "$tmp/trunc.pth"
refused "a zip file cut short" "zip: no end of central directory record" "$tmp/trunc.pth"
head -c 40000000 "$tmp/r34-legacy.pth" > "$tmp/trunc-legacy.pth"
refused "a legacy file cut short" "legacy format: byte [0-9]+: storage '[0-9]+' \([0-9]+ bytes\) runs past the end" \
        "$tmp/trunc-legacy.pth"
refused "a bad central directory" "zip: entry '.*': no local header at byte 12345" "$tmp/badcd.pth"
refused "a global outside the list" "evil/data.pkl: byte [0-9]+: global 'posix.system' is not one a state dict uses" \
        "$tmp/evil.pth"
refused "  in a legacy file" "legacy format: the object: byte [0-9]+: global 'posix.system'" "$tmp/evil-legacy.pth"
refused "a whole module" "module/data.pkl: byte 2: global 'torch.nn.modules.linear.Linear'" "$tmp/module.pth"
cp "$tmp/r18-half.pth" "$tmp/flip.pth"
flip_byte "$tmp/flip.pth" 10000000
refused "a storage's byte changed" "zip: entry 'r18-half/data/[0-9]+': CRC-32 [0-9a-f]+, the directory says" \
        "$tmp/flip.pth"
cp "$tmp/r34.bdw" "$tmp/flip.bdw"
flip_byte "$tmp/flip.bdw" 1000000
refused "a weights file's byte changed" "checksum mismatch" "$tmp/flip.bdw"
printf 'not a state dict\n' > "$tmp/junk.pth"
refused "not a torch file" "neither a PyTorch file \(a zip archive or a legacy pickle\) nor a benchd weights file" \
        "$tmp/junk.pth"
err=$("$BENCHCTL" weights check "$tmp/missing.pth" 2>&1); rc=$?
is "a missing file: exit 1 naming it" "$rc:$err" \
   "1:benchctl: weights check: cannot open '$tmp/missing.pth': No such file or directory"
err=$("$BENCHCTL" weights convert "$tmp/r18-half.pth" "$tmp/nodir/x.bdw" 2>&1); rc=$?
like "an output directory that is not there: exit 1 naming it" "$rc:$err" \
     "^1:benchctl: weights convert: cannot create a file next to '$tmp/nodir/x.bdw'"
is "  no temporary files left" "$(find "$tmp" -name '*.tmp.*' | wc -l)" 0

# ---- usage ---------------------------------------------------------------------------------
usage() {   # usage DESCRIPTION PATTERN ARGS...
    local desc=$1 pat=$2 err rc; shift 2
    err=$("$BENCHCTL" weights "$@" 2>&1); rc=$?
    is "$desc: exit 2" "$rc" 2
    like "  says so" "$err" "$pat"
}
usage "no action" "missing action: check, convert or fetch"
usage "an unknown action" "unknown action 'download': check, convert or fetch" download
usage "convert without OUT" "benchctl weights convert: missing IN.pth and OUT.bdw" convert "$tmp/r34.pth"
usage "check of two files" "unexpected argument" check "$tmp/r34.pth" "$tmp/r50.pth"
out=$("$BENCHCTL" weights --help); rc=$?
is "weights --help: exit 0" "$rc" 0
like "  lists the actions" "$out" "^  convert IN.pth OUT.bdw"
like "weights convert --help" "$("$BENCHCTL" weights convert --help)" "^usage: benchctl weights convert IN.pth OUT.bdw"

# ---- the trainers load what it wrote --------------------------------------------------------
SSD=$top_builddir/benchd-ssd MR=$top_builddir/benchd-maskrcnn
if [ -x "$SSD" ]; then
    out=$("$SSD" --synthetic --batch-size 2 --image-size 64 --backbone resnet34 --threads 1 --loader-workers 1 \
          --max-steps 1 --seed 1 --pretrained "$tmp/r34-legacy.c.bdw" 2>&1); rc=$?
    is "benchd-ssd --pretrained the converted legacy resnet34: exit 0" "$rc" 0
    like "  its backbone loaded, layer4 and fc not" "$out" \
         "^# pretrained backbone: 145 tensors from '$tmp/r34-legacy.c.bdw' \(r34-legacy.pth\), 37 not used$"
else
    skip 2 "benchd-ssd not built"
fi
if [ -x "$MR" ]; then
    out=$("$MR" --synthetic --config small --backbone resnet50 --frozen-bn 1 --ims-per-batch 1 --threads 1 \
          --seed 1 --max-steps 1 --pretrained "$tmp/r50.c.bdw" 2>&1); rc=$?
    is "benchd-maskrcnn --pretrained the converted resnet50: exit 0" "$rc" 0
    like "  every tensor but fc loaded" "$out" \
         "^# pretrained backbone: 265 tensors from '$tmp/r50.c.bdw' \(r50.pth\), 2 not used$"
else
    skip 2 "benchd-maskrcnn not built"
fi
done_testing

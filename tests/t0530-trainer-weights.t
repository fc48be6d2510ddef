#!/bin/bash
# Trainer core, pretrained weights: trainer/tools/convert-torchvision.py turns
# a torchvision state dict into a weights file that loads by name into the
# ResNet backbones; wrong models, damaged files and other versions are
# one-line errors that leave the model untouched.
. "${srcdir:-.}/tests/lib.sh"
T=$top_builddir/tests/helper/trainer-tool
CONV=$srcdir/trainer/tools/convert-torchvision.py
[ -x "$T" ] || skip_all "trainer-tool not built"
/usr/bin/python3 -c 'import torch, torchvision' 2>/dev/null || skip_all "/usr/bin/python3 has no torch/torchvision (Debian python3-torch, python3-torchvision)"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
r18=(--depth 18 --width 64 --classes 1000)

out=$(/usr/bin/python3 "$CONV" --random resnet18 --seed 3 "$tmp/r18.bdw" 2>&1)
is "converter: a random torchvision resnet18" "$?" 0
like "  reports the tensors written" "$out" "102 tensors written"
out=$("$T" load-weights "$tmp/r18.bdw" "${r18[@]}" --strict)
is "loads into ResNet-18 by name, all tensors" "$out" "loaded 102 skipped 0 source 'torchvision resnet18 random seed 3'"
out=$("$T" load-weights "$tmp/r18.bdw" --depth 18 --width 64 --classes 0 --prefix backbone. --strict --ignore fc.)
is "as a backbone under a prefix, the classifier ignored" "$out" "loaded 100 skipped 2 source 'torchvision resnet18 random seed 3'"

# a saved state dict (and one wrapped by DataParallel) converts the same way
/usr/bin/python3 - "$tmp" <<'PY'
import sys, torch, torchvision
torch.manual_seed(3)
sd = torchvision.models.resnet18().state_dict()
torch.save(sd, sys.argv[1] + "/sd.pth")
torch.save({"state_dict": {"module." + k: v for k, v in sd.items()}}, sys.argv[1] + "/ddp.pth")
PY
/usr/bin/python3 "$CONV" "$tmp/sd.pth" "$tmp/sd.bdw" > /dev/null
/usr/bin/python3 "$CONV" "$tmp/ddp.pth" "$tmp/ddp.bdw" --strip module. > /dev/null
check "a state dict file converts" "$T" load-weights "$tmp/sd.bdw" "${r18[@]}" --strict
check "a DataParallel checkpoint with --strip module. converts" "$T" load-weights "$tmp/ddp.bdw" "${r18[@]}" --strict
"$T" save-weights "$tmp/rt.bdw" "${r18[@]}" --seed 9
check "the C writer's file loads back" "$T" load-weights "$tmp/rt.bdw" "${r18[@]}" --strict
out=$(/usr/bin/python3 "$CONV" "$tmp/missing.pth" "$tmp/x.bdw" 2>&1); rc=$?
is "converter: a missing input fails" "$rc" 1
like "  with a message naming it" "$out" "cannot read '.*/missing.pth'"
check "  and writes nothing" test ! -e "$tmp/x.bdw"

bad() {   # bad DESCRIPTION PATTERN FILE [options]
    local desc=$1 pat=$2 file=$3; shift 3
    local err rc
    err=$("$T" load-weights "$file" "$@" 2>&1 >/dev/null); rc=$?
    is "$desc: exit 1" "$rc" 1
    like "$desc: says why" "$err" "$pat"
    is "$desc: one line, model untouched" "$(printf '%s\n' "$err" | wc -l)" 1
}
bad "ResNet-18 weights into ResNet-34" "has no tensor 'layer1.2.conv1.weight'" "$tmp/r18.bdw" --depth 34 --width 64 --classes 1000 --strict
/usr/bin/python3 "$CONV" --random resnet34 "$tmp/r34.bdw" > /dev/null
bad "ResNet-34 weights into ResNet-18" "tensor 'layer1.2.conv1.weight' is not in the model" "$tmp/r34.bdw" "${r18[@]}" --strict
bad "another width" "tensor 'conv1.weight' is \\(64, 3, 7, 7\\), the model's 'conv1.weight' is \\(32, 3, 7, 7\\)" "$tmp/r18.bdw" --depth 18 --width 32 --classes 1000
head -c 100000 "$tmp/r18.bdw" > "$tmp/trunc.bdw"
bad "truncated" "truncated in tensor" "$tmp/trunc.bdw" "${r18[@]}"
cp "$tmp/r18.bdw" "$tmp/v9.bdw"; printf '\011' | dd of="$tmp/v9.bdw" bs=1 seek=8 conv=notrunc 2>/dev/null
bad "another format version" "format version 9, this build reads version 1" "$tmp/v9.bdw" "${r18[@]}"
cp "$tmp/r18.bdw" "$tmp/flip.bdw"; size=$(stat -c %s "$tmp/flip.bdw")
flip_byte "$tmp/flip.bdw" $((size / 2))
bad "one byte changed" "checksum mismatch" "$tmp/flip.bdw" "${r18[@]}"
# a tensor of 8 dimensions of 2^30: its element count overflows 64 bits (to 0
# when wrapped), and the file must not pass for one holding it
/usr/bin/python3 - "$tmp/huge.bdw" <<'EOF_PY'
import struct, sys, zlib
body = b"BDWEIGHT" + struct.pack("<II", 1, 1) + b"x".ljust(64, b"\0")
body += struct.pack("<H", 1) + b"x" + bytes([0, 8]) + struct.pack("<8Q", *[1 << 30] * 8) + b"\0" * 4
open(sys.argv[1], "wb").write(body + struct.pack("<II", zlib.crc32(body), 0) + b"BDWTEND\0")
EOF_PY
bad "a tensor of 2^240 elements" "truncated in tensor 'x'" "$tmp/huge.bdw" "${r18[@]}"
# a source name filling its 64 bytes, with no NUL (the checksum made right)
/usr/bin/python3 - "$tmp/r18.bdw" "$tmp/longname.bdw" <<'EOF_PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
body = d[:16] + b"x" * 64 + d[80:-16]
open(sys.argv[2], "wb").write(body + struct.pack("<II", zlib.crc32(body), 0) + d[-8:])
EOF_PY
bad "a source name of 64 bytes" "the source name is not NUL-terminated in its 64 bytes" "$tmp/longname.bdw" "${r18[@]}"
head -c 300 /dev/urandom > "$tmp/junk.bdw"
bad "not a weights file" "not a benchd weights file" "$tmp/junk.bdw" "${r18[@]}"
done_testing

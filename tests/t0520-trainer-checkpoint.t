#!/bin/bash
# Trainer core, checkpoints: a run killed at any moment resumes from its last
# checkpoint and ends bit-identical to a run that was never stopped; damaged,
# foreign or other-version checkpoints are one-line errors that leave the
# model untouched.
. "${srcdir:-.}/tests/lib.sh"
T=$top_builddir/tests/helper/trainer-tool
[ -x "$T" ] || skip_all "trainer-tool not built"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
net=(--depth 18 --width 16 --size 32 --batch 4 --threads 1 --seed 3)

"$T" train "${net[@]}" --steps 8 --params-out "$tmp/full" > "$tmp/full.out" 2>&1
is "an uninterrupted run of 8 steps" "$?" 0

# killed (SIGKILL) after its 5th step, checkpoints every 2 steps
"$T" train "${net[@]}" --steps 8 --checkpoint "$tmp/ck" --save-every 2 --kill-after 5 > "$tmp/a.out" 2>&1
is "the run killed itself (SIGKILL)" "$?" 137
check "the checkpoint of step 4 exists" test -s "$tmp/ck"
"$T" train "${net[@]}" --steps 8 --checkpoint "$tmp/ck" --save-every 2 --resume --params-out "$tmp/res" > "$tmp/b.out" 2>&1
is "resumed run: exit 0" "$?" 0
like "it resumed at step 4" "$(cat "$tmp/b.out")" "^resumed at step 4"
is "steps 5..8 have bit-identical losses" "$(grep '^step [5-8] ' "$tmp/b.out")" "$(grep '^step [5-8] ' "$tmp/full.out")"
is "final parameters bit-identical to the uninterrupted run" "$("$T" compare "$tmp/full" "$tmp/res" | awk '{print $3}')" "max-abs-diff"
is "  (no difference at all)" "$("$T" compare "$tmp/full" "$tmp/res" | awk '{print $4}')" 0
check "no temporary file left behind" test -z "$(ls "$tmp" | grep tmp)"

# killed from outside at an arbitrary moment, checkpointing every step, twice
"$T" train "${net[@]}" --steps 24 --params-out "$tmp/full24" > /dev/null 2>&1
rm -f "$tmp/ck2"
for delay in 0.7 1.6; do
    "$T" train "${net[@]}" --steps 24 --checkpoint "$tmp/ck2" --save-every 1 --resume > /dev/null 2>&1 &
    pid=$!
    sleep "$delay"
    kill -9 "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
done
"$T" train "${net[@]}" --steps 24 --checkpoint "$tmp/ck2" --save-every 1 --resume --params-out "$tmp/res24" > "$tmp/c.out" 2>&1
is "killed twice with kill -9, then resumed: exit 0" "$?" 0
is "  and the parameters equal the uninterrupted run's" "$("$T" compare "$tmp/full24" "$tmp/res24" | awk '{print $4}')" 0

# bad checkpoints: one line, exit 1, the model untouched (the tool checks that)
bad() {   # bad DESCRIPTION PATTERN FILE [options]
    local desc=$1 pat=$2 file=$3; shift 3
    local err rc
    err=$("$T" load-checkpoint "$file" "${net[@]}" "$@" 2>&1 >/dev/null); rc=$?
    is "$desc: exit 1" "$rc" 1
    like "$desc: says why" "$err" "$pat"
    is "$desc: one line, model untouched" "$(printf '%s\n' "$err" | wc -l)" 1
}
check "the good checkpoint loads" "$T" load-checkpoint "$tmp/ck" "${net[@]}"
head -c 2000 "$tmp/ck" > "$tmp/trunc"
bad "truncated" "checkpoint '.*/trunc': truncated \\(2000 bytes, expected [0-9]+\\)" "$tmp/trunc"
head -c 100 "$tmp/ck" > "$tmp/short"
bad "truncated in the header" "truncated \\(100 bytes\\)" "$tmp/short"
cp "$tmp/ck" "$tmp/v2"; printf '\002' | dd of="$tmp/v2" bs=1 seek=8 conv=notrunc 2>/dev/null
bad "another format version" "format version 2, this build reads version 1" "$tmp/v2"
cp "$tmp/ck" "$tmp/flip"; size=$(stat -c %s "$tmp/flip")
flip_byte "$tmp/flip" $((size / 2))
bad "one byte changed" "checksum mismatch" "$tmp/flip"
cat "$tmp/ck" > "$tmp/long"; printf 'x' >> "$tmp/long"
bad "a byte appended" "unexpected bytes at the end" "$tmp/long"
head -c 5000 /dev/urandom > "$tmp/junk"
bad "not a checkpoint" "not a benchd checkpoint" "$tmp/junk"
bad "missing file" "No such file" "$tmp/none"
# a model name filling its 64 bytes, with no NUL (the checksum made right)
/usr/bin/python3 - "$tmp/ck" "$tmp/longname" <<'EOF_PY'
import struct, sys, zlib
d = open(sys.argv[1], "rb").read()
body = d[:16] + b"x" * 64 + d[80:-16]
open(sys.argv[2], "wb").write(body + struct.pack("<II", zlib.crc32(body), 0) + d[-8:])
EOF_PY
bad "a model name of 64 bytes" "the model name is not NUL-terminated in its 64 bytes" "$tmp/longname"
bad "another model" "holds model 'resnet18-w16-c10', expected 'resnet18-w24-c10'" "$tmp/ck" --width 24
bad "other shapes (name check off)" "tensor 'conv1.weight' is \\(16, 3, 7, 7\\) in the checkpoint, \\(24, 3, 7, 7\\) in the model" "$tmp/ck" --width 24 --any-model
bad "other depth (name check off)" "102 tensors, the model has 182" "$tmp/ck" --depth 34 --any-model
done_testing

#!/bin/bash
# A destination that is too small, or fills up during the copy (a 4 MiB tmpfs
# mounted here; needs root): refused with the numbers, or failed with a clear
# error, verified files kept, no partial file under a final name; the copy
# across filesystems falls back from copy_file_range.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/stage-lib.sh"
tmp=$(mktemp -d)
mnt="$tmp/small"
mkdir -p "$mnt"
mount -t tmpfs -o size=4m,mode=755 benchd-test "$mnt" 2>/dev/null || { rm -rf "$tmp"; skip_all "cannot mount a tmpfs (not root?)"; }
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    umount "$mnt"
    rm -rf "$tmp"
}
trap cleanup EXIT
export BENCHD_HOME="$tmp/home"

# ---- too big from the start: refused with the numbers ------------------------------
mk_files "$tmp/big" 6 1048576
out=$("$BENCHCTL" stage --local --src "$tmp/big" --dst "$mnt/big" 2>&1); rc=$?
is "a dataset larger than the destination is refused" "$rc" 1
like "  with the numbers" "$out" "not enough space in the destination '$mnt/big': 6 files to copy need 6.0 MiB \(6291456 bytes\), [0-9.]+ MiB \([0-9]+ bytes\) available"
is "  before copying anything" "$(find "$mnt/big" -type f | wc -l)" 0
mk_files "$tmp/one" 1 5242880
like "one file too big: the count in the singular" "$("$BENCHCTL" stage --local --src "$tmp/one" --dst "$mnt/one" 2>&1)" \
     "not enough space in the destination '$mnt/one': 1 file to copy needs 5.0 MiB \(5242880 bytes\)"

# ---- full during the copy ---------------------------------------------------------------
src="$tmp/src" dst="$mnt/ds"
mk_files "$src" 12 262144
"$BENCHCTL" manifest "$src" -q -o /dev/null >/dev/null    # checksums known: copies take the copy_file_range path
"$BENCHCTL" stage --local --src "$src" --dst "$dst" --bwlimit 1 >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 300); do
    [ "$(staged "$dst" | wc -l)" -ge 2 ] && break
    sleep 0.1
done
dd if=/dev/zero of="$mnt/filler" bs=64k 2>/dev/null   # until the tmpfs is full
wait "$pid"; rc=$?; pid=
is "the stage fails when the destination fills up" "$rc" 1
like "  with a clear error" "$(cat "$tmp/out")" "cannot write '[^']+' in the destination '$dst': No space left on device"
k=$(staged "$dst" | wc -l)
echo "# $k of 12 files staged when the destination filled up"
check "  some files were staged before" test "$k" -ge 2
check "  every file under its final name is complete and verified" /usr/bin/python3 -c '
import os, sys
src, dst = sys.argv[1], sys.argv[2]
for name in os.listdir(dst):
    if name.startswith(".benchd"):
        continue
    if open(os.path.join(src, name), "rb").read() != open(os.path.join(dst, name), "rb").read():
        sys.exit(name + " differs")' "$src" "$dst"
is "  no temporary file is left" "$(find "$dst" -name '.benchd-tmp.*' | wc -l)" 0
check "  no manifest claims the tree complete" test ! -e "$dst/.benchd-manifest"
like "  the state file says failed" "$(cat "$BENCHD_HOME/stage/src.state")" "state=failed"

rm "$mnt/filler"
json=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --copy-method copy_file_range --json 2>/dev/null)
is "with space again, the next stage copies only the rest" \
   "$(printf '%s' "$json" | jfield state progress.files_copied progress.files_present)" "complete $((12 - k)) $k"
is "copy_file_range across filesystems falls back to sendfile" \
   "$(printf '%s' "$json" | /usr/bin/python3 -c 'import json, sys; m = json.load(sys.stdin)["progress"]["copy_methods"]; print(m["copy_file_range"], m["sendfile"] > 0)')" "0 True"
check "the tree is complete and exact" check_tree "$src" "$dst"
done_testing

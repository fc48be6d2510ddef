#!/bin/bash
# benchctl manifest and benchctl stage --local: manifests checked against
# xxhsum, exact copies (content, modes, nanosecond mtimes, links), awkward
# names, resume, verify-only, repair, --delete, the copy methods, errors.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/stage-lib.sh"
tmp=$(mktemp -d)
trap 'chmod -R u+w "$tmp" 2>/dev/null; umount "$tmp/ro-src" 2>/dev/null; rm -rf "$tmp"' EXIT
export BENCHD_HOME="$tmp/home"
src="$tmp/coco" dst="$tmp/local/coco"
state="$BENCHD_HOME/stage"

# a small dataset with everything a tree can hold
mkdir -p "$tmp/outside" && echo "not for staging" > "$tmp/outside/leak"
/usr/bin/python3 - "$src" "$tmp/outside" <<'EOF'
import os, random, sys
root, outside = os.fsencode(sys.argv[1]), os.fsencode(sys.argv[2])
rng = random.Random(7)
def put(rel, n, mode=0o644):
    p = os.path.join(root, rel)
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, 'wb') as f:
        f.write(rng.randbytes(n))
    os.chmod(p, mode)
    os.utime(p, ns=(1600000000_000000000, 1600000000_000000000 + rng.randrange(10**15)))
for i in range(40):
    put(b'train2017/%012d.jpg' % i, rng.randrange(1000, 300000))
for name in (b'with space.jpg', b'new\nline.jpg', b'\xff\xfe-not-utf8.jpg', b'-dash.jpg', b'100%.jpg', b'tab\there'):
    put(b'train2017/' + name, rng.randrange(10, 5000))
put(b'annotations/instances_val2017.json', 5 * 1024 * 1024 + 3)
put(b'empty', 0)
put(b'private', 100, 0o600)
put(b'run.sh', 100, 0o755)
put(b'ro/inner/f', 100)
os.chmod(root + b'/ro', 0o555)
# a group's shared directory (setgid), a sticky one and a setuid program
put(b'group/tool', 100, 0o4755)
os.chmod(root + b'/group', 0o2775)
os.mkdir(root + b'/drop', 0o1777)
os.chmod(root + b'/drop', 0o1777)
os.symlink(b'../annotations/instances_val2017.json', root + b'/train2017/ann-link')
os.symlink(b'/etc/passwd', root + b'/evil-absolute')
os.symlink(b'../../outside/leak', root + b'/train2017/evil-up')
os.symlink(outside, root + b'/outside-dir')
os.mkfifo(root + b'/fifo')
EOF
nfiles=52

out=$("$BENCHCTL" stage --help); rc=$?
is "stage --help exits 0" "$rc" 0
like "stage --help lists the options" "$out" "--verify-only"
like "manifest --help" "$("$BENCHCTL" manifest --help)" "-o, --output FILE"

# ---- manifest --------------------------------------------------------------
out=$("$BENCHCTL" manifest "$src" -o "$tmp/m1" -q 2>&1); rc=$?
is "manifest -o exits 0" "$rc" 0
like "manifest -o summarises" "$out" "manifest of .*: $nfiles files, .* checksum [0-9a-f]{32}, stored as .*/coco/.benchd-manifest"
like "the FIFO is reported, not listed" "$out" "warning: 'fifo' is a FIFO: not staged"
check "the manifest is stored with the writable source" test -f "$src/.benchd-manifest"
check "-o FILE and the stored manifest are the same" cmp "$tmp/m1" "$src/.benchd-manifest"
"$BENCHCTL" manifest "$src" -q > "$tmp/m2" 2>/dev/null
check "without -o it prints the same manifest" cmp "$tmp/m1" "$tmp/m2"
if command -v xxhsum >/dev/null; then
    check "every checksum and the end line agree with xxhsum -H2" check_tree --sums "$tmp/m1" "$src"
else
    echo "# xxhsum not installed (Debian xxhash): checksums not cross-checked"
fi
like "names are escaped in the manifest" "$(cat "$tmp/m1")" "train2017/new%0Aline.jpg"
like "bytes that are not UTF-8 are escaped" "$(cat "$tmp/m1")" "train2017/%FF%FE-not-utf8.jpg"
like "links are listed with their target" "$(cat "$tmp/m1")" "^l 0777 [0-9.]+ [0-9]+ - outside-dir /"
like "a second run reuses the checksums (sizes and mtimes match)" \
     "$("$BENCHCTL" manifest "$src" -o "$tmp/m3" -q 2>&1)" " 0 files checksummed"
printf 'x' | dd of="$src/.benchd-manifest" bs=1 seek=30 conv=notrunc 2>/dev/null
out=$("$BENCHCTL" manifest "$src" -o "$tmp/m3" -q 2>&1)
like "a damaged stored manifest is reported and rebuilt" "$out" "ignoring stored manifest: .*checksum mismatch"
like "  by checksumming every file" "$out" " $nfiles files checksummed"
check "  into the same manifest" cmp "$tmp/m1" "$src/.benchd-manifest"

# ---- stage -------------------------------------------------------------------
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" 2>"$tmp/err"); rc=$?
is "stage exits 0" "$rc" 0
like "stage summary" "$out" "^staged 'coco' in $dst: $nfiles files, .*: $nfiles copied, 0 already present, 0 repaired"
err=$(cat "$tmp/err")
like "the absolute link is reported, not staged" "$err" "warning: symlink 'evil-absolute' points out of the source tree \('/etc/passwd'\): not staged"
like "the climbing link is reported" "$err" "warning: symlink 'train2017/evil-up' points out of the source tree"
check "the copy is exact (content, modes, mtimes, links)" check_tree "$src" "$dst"
check "nothing outside the source was followed" test ! -e "$dst/outside-dir/leak"
check "the destination holds the manifest" cmp "$src/.benchd-manifest" "$dst/.benchd-manifest"
is "a read-only directory keeps its mode" "$(stat -c %a "$dst/ro")" 555
is "setgid, sticky and setuid bits are kept" "$(stat -c %a "$dst/group" "$dst/drop" "$dst/group/tool" | tr '\n' ' ')" \
   "2775 1777 4755 "
like "the state file records the stage" "$(cat "$state/coco.state")" "state=complete"
like "  with the manifest checksum" "$(cat "$state/coco.state")" "manifest=$(tail -1 "$src/.benchd-manifest" | cut -d' ' -f2)"

# resume of a complete tree: nothing copied, nothing touched
inodes() { find "$dst" -type f ! -name .benchd-manifest -printf '%i %T@ %p\n' | sort; }
before=$(inodes)
json=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --json 2>/dev/null)
is "a second stage copies nothing" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys; j = json.load(sys.stdin)
p = j["progress"]; print(j["state"], p["files_copied"], p["files_present"], p["files_hashed"])')" "complete 0 $nfiles 0"
is "  and leaves every file as it was (inode, mtime)" "$(inodes)" "$before"

# ---- verify-only, repair -----------------------------------------------------
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify-only); rc=$?
is "verify-only of an intact tree exits 0" "$rc" 0
like "  and says so" "$out" "^verified 'coco' in $dst: $nfiles files, .*, all match manifest [0-9a-f]{32}"
flip() { # flip one byte in the middle of a file, keep its size and mtime (silent corruption)
    /usr/bin/python3 -c '
import os, sys
p = os.fsencode(sys.argv[1]); st = os.stat(p)
with open(p, "r+b") as f:
    f.seek(st.st_size // 2); b = f.read(1); f.seek(st.st_size // 2); f.write(bytes([b[0] ^ 1]))
os.utime(p, ns=(st.st_atime_ns, st.st_mtime_ns))' "$1"
}
flip "$dst/train2017/000000000003.jpg"
flip "$dst/train2017/new"$'\n'"line.jpg"
rm "$dst/train2017/000000000005.jpg"
echo extra > "$dst/train2017/extra.txt"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify-only); rc=$?
is "verify-only exits 1 when something is wrong" "$rc" 1
like "a flipped byte is found" "$out" "^corrupt: 'train2017/000000000003.jpg' does not match its manifest checksum"
like "  also in a name with a newline (printed escaped)" "$out" "^corrupt: 'train2017/new%0Aline.jpg'"
like "a missing file is found" "$out" "^missing: 'train2017/000000000005.jpg'"
like "an extra file is found" "$out" "^extra: 'train2017/extra.txt' is not in the manifest"
like "the summary counts them" "$out" "4 problems in $nfiles files"
out=$("$BENCHCTL" stage --local --dst "$dst" --name coco --verify-only)
like "verify-only without --src uses the destination's manifest" "$out" "4 problems in $nfiles files"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" 2>"$tmp/err"); rc=$?
is "the next stage (no --verify) exits 0" "$rc" 0
like "  recopies the files verify-only found damaged" "$out" "repaired 'train2017/000000000003.jpg'"
like "  and the one with a newline" "$out" "repaired 'train2017/new%0Aline.jpg'"
like "  and the missing one" "$out" "3 copied, $((nfiles - 3)) already present, 2 repaired"
like "  keeps the extra file with a warning" "$(cat "$tmp/err")" "warning: not in the manifest: 'train2017/extra.txt' kept \(--delete removes it\)"
is "the tree is intact again (but for the extra file)" \
   "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify-only | grep -v '^warning' | grep -v '^verify of')" \
   "extra: 'train2017/extra.txt' is not in the manifest"
flip "$dst/annotations/instances_val2017.json"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify 2>/dev/null)
like "stage --verify finds and repairs a flipped byte in one go" "$out" "1 copied, $((nfiles - 1)) already present, 1 repaired"
touch "$dst/train2017/000000000011.jpg"; chmod 600 "$dst/train2017/000000000011.jpg"
json=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify --json 2>/dev/null)
is "--verify: right bytes, wrong mtime and mode: fixed without a copy" \
   "$(printf '%s' "$json" | jfield state progress.files_copied progress.files_verified)" "complete 0 $nfiles"
is "  the mtime and mode are the source's again" "$(stat -c '%Y %a' "$dst/train2017/000000000011.jpg")" \
   "$(stat -c '%Y %a' "$src/train2017/000000000011.jpg")"
mkdir -p "$dst/junk/deeper" && touch "$dst/junk/deeper/x"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --delete 2>/dev/null)
like "--delete removes extra files" "$out" "removed 'train2017/extra.txt': not in the manifest"
like "  and extra directories, contents first" "$out" "removed 'junk/deeper/x'"
check "the copy is exact after --delete" check_tree "$src" "$dst"

# a plain change at the destination (new mtime) is recopied without --verify
echo "scribble" >> "$dst/train2017/000000000007.jpg"
like "a file changed at the destination is recopied" \
     "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" 2>/dev/null)" "1 copied, $((nfiles - 1)) already present"
# a file where a directory was, a directory where a file was
rm -rf "$dst/ro" 2>/dev/null; chmod u+w "$dst/ro" 2>/dev/null; rm -rf "$dst/ro"; echo file > "$dst/ro"
rm "$dst/empty" && mkdir -p "$dst/empty/sub" && touch "$dst/empty/sub/x"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" 2>&1); rc=$?
is "a directory in the way of a file fails without --delete" "$rc" 1
like "  saying why" "$out" "'empty' is a directory in the destination, a file in the source: not replaced \(--delete replaces it\)"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --delete 2>&1); rc=$?
is "  and is replaced with --delete" "$rc" 0
like "  which says why it went" "$out" "removed 'empty': a directory where the manifest has a file"
like "  and what it held: not in the manifest" "$out" "removed 'empty/sub/x': not in the manifest"
check "the copy is exact after type changes" check_tree "$src" "$dst"
# a directory where the manifest has a symlink (into the tree, or out of it: not staged)
rm "$dst/train2017/ann-link" && mkdir -p "$dst/train2017/ann-link/sub" "$dst/evil-absolute"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify-only 2>&1)
like "verify-only: a directory where the manifest has a symlink not staged" "$out" \
     "^extra: 'evil-absolute': the manifest's symlink there points out of the source tree \(not staged\)"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" 2>&1)
like "  kept without --delete, saying why" "$out" \
     "warning: the manifest's symlink there points out of the source tree \(not staged\): 'evil-absolute' kept \(--delete removes it\)"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --delete 2>&1); rc=$?
is "--delete replaces a directory where the manifest has a symlink" "$rc" 0
like "  saying why it went" "$out" "removed 'train2017/ann-link': a directory where the manifest has a symlink"
like "  and what it held" "$out" "removed 'train2017/ann-link/sub': not in the manifest"
like "  and why the other went" "$out" \
     "removed 'evil-absolute': the manifest's symlink there points out of the source tree \(not staged\)"
check "the copy is exact again" check_tree "$src" "$dst"

# a source that changed: only the changed file is checksummed and copied
printf 'new content' > "$src/train2017/000000000009.jpg"
json=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --json 2>/dev/null)
is "a changed source file is rehashed and recopied, alone" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys; j = json.load(sys.stdin)
print(j["state"], j["progress"]["files_hashed"], j["progress"]["files_copied"])')" "complete 1 1"
check "the stored manifest follows the source" cmp "$src/.benchd-manifest" "$dst/.benchd-manifest"

# ---- copy methods --------------------------------------------------------------
for m in copy_file_range sendfile readwrite; do
    json=$("$BENCHCTL" stage --local --src "$src" --dst "$tmp/by-$m" --copy-method "$m" --name "m-$m" --json 2>/dev/null)
    is "--copy-method $m copies every file that way" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys; j = json.load(sys.stdin)
print(j["state"], j["progress"]["copy_methods"][sys.argv[1]])' "$m")" "complete $nfiles"
    check "  exactly" check_tree "$src" "$tmp/by-$m"
done
# auto: copy_file_range only where the filesystem copies without moving data
fstype=$(stat -f -c %T "$tmp")
case $fstype in
    btrfs|xfs|ocfs2|bcachefs|zfs|nfs|smb2|cifs) want=copy_file_range ;;
    *) want=readwrite ;;
esac
json=$("$BENCHCTL" stage --local --src "$src" --dst "$tmp/by-auto" --name m-auto --json 2>/dev/null)
is "--copy-method auto on $fstype copies by $want" "$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys; j = json.load(sys.stdin)
print(j["state"], j["progress"]["copy_methods"][sys.argv[1]])' "$want")" "complete $nfiles"
json=$("$BENCHCTL" stage --local --src "$src" --dst "$tmp/by-fsync" --fsync file --workers 3 --name fs --json)
like "--fsync file --workers 3" "$json" '"state":[[:space:]]*"complete"'

# ---- a read-only source keeps its manifest in the state directory ---------------
mkdir -p "$tmp/ro-src"
if mount --bind "$src" "$tmp/ro-src" 2>/dev/null && mount -o remount,ro,bind "$tmp/ro-src" 2>/dev/null; then
    rm -f "$state/manifests/rococo.manifest"
    printf 'x' > "$tmp/probe" && cp "$tmp/probe" "$src/probe-file" # the source changes: its manifest must be rewritten
    out=$("$BENCHCTL" stage --local --src "$tmp/ro-src" --dst "$tmp/rodst" --name rococo 2>&1); rc=$?
    is "staging from a read-only source exits 0" "$rc" 0
    check "  storing the manifest in the state directory" test -f "$state/manifests/rococo.manifest"
    like "  and saying where" "$out" "manifest [0-9a-f]{32} \($state/manifests/rococo.manifest\)"
    json=$("$BENCHCTL" stage --local --src "$tmp/ro-src" --dst "$tmp/rodst" --name rococo --json)
    is "  which the next stage reuses" "$(printf '%s' "$json" | jfield progress.files_hashed)" 0
    umount "$tmp/ro-src"
    rm -f "$src/probe-file"
else
    echo "# cannot make a read-only bind mount here: read-only source not tested"
fi

# ---- cancel ------------------------------------------------------------------------
"$BENCHCTL" stage --local --src "$src" --dst "$tmp/cancelled" --name cancelled --bwlimit 0.5 >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 100); do
    [ -n "$(find "$tmp/cancelled" -name '.benchd-tmp.*' 2>/dev/null)" ] && break
    sleep 0.1
done
kill -INT "$pid"; wait "$pid"; rc=$?
is "SIGINT cancels the stage (exit 130)" "$rc" 130
like "  saying how to resume" "$(cat "$tmp/out")" "stage of 'cancelled' cancelled: .* run it again to resume"
like "progress lines when not on a terminal" "$(cat "$tmp/out")" "^stage cancelled: +[0-9]+% [0-9]+/$nfiles files [0-9.]+ ([KMG]iB|bytes)/[0-9.]+ MiB [0-9.]+ ([KMG]iB|bytes)/s ETA"
is "  without leaving temporary files" "$(find "$tmp/cancelled" -name '.benchd-tmp.*' | wc -l)" 0
like "  and records it" "$(cat "$state/cancelled.state")" "state=cancelled"

# ---- a dataset of one file: counts in the singular -----------------------------------------
mkdir -p "$tmp/one" && head -c 2000000 /dev/urandom > "$tmp/one/only.bin"
"$BENCHCTL" stage --local --src "$tmp/one" --dst "$tmp/one-dst" --bwlimit 0.5 >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 100); do
    [ -n "$(find "$tmp/one-dst" -name '.benchd-tmp.*' 2>/dev/null)" ] && break
    sleep 0.1
done
kill -INT "$pid"; wait "$pid"
like "one file: the cancelled summary says '1 file'" "$(cat "$tmp/out")" "^stage of 'one' cancelled: 0 of 1 file in place"
like "  the progress lines too" "$(cat "$tmp/out")" "^stage one: +[0-9]+% 0/1 file [0-9]"
out=$("$BENCHCTL" stage --local --src "$tmp/one" --dst "$tmp/one-dst" --bwlimit 10 2>"$tmp/err")
like "  the stage summary" "$out" "^staged 'one' in $tmp/one-dst: 1 file, 1.9 MiB: 1 copied"
mkdir -p "$tmp/one/sub" && ln -s only.bin "$tmp/one/link" && rm "$tmp/one/.benchd-manifest"
like "  benchctl manifest" "$("$BENCHCTL" manifest "$tmp/one" -o "$tmp/one.manifest" 2>&1)" \
     "^manifest of $tmp/one: 1 file, 1.9 MiB, 1 directory, 1 link; 1 file checksummed in"
rm -r "$tmp/one/sub" "$tmp/one/link"
is "  no plural for one file anywhere" "$(cat "$tmp/out" "$tmp/err" <(printf '%s\n' "$out") | grep -c '[^0-9]1 files\|/1 files')" 0
like "  verify-only" "$("$BENCHCTL" stage --local --src "$tmp/one" --dst "$tmp/one-dst" --verify-only)" \
     "^verified 'one' in $tmp/one-dst: 1 file, 1.9 MiB, all match"
echo more >> "$tmp/one-dst/only.bin"
like "  verify-only with a problem" "$("$BENCHCTL" stage --local --src "$tmp/one" --dst "$tmp/one-dst" --verify-only)" \
     "^verify of 'one' in $tmp/one-dst: 1 problem in 1 file \(manifest"
rm "$tmp/one-dst/only.bin" && mkdir "$tmp/one-dst/only.bin"
like "  a failed stage" "$("$BENCHCTL" stage --local --src "$tmp/one" --dst "$tmp/one-dst" 2>/dev/null)" \
     "^stage of 'one' failed: 1 error; 0 of 1 file in place and verified"

# ---- names like the stager's own ------------------------------------------------------
# a source's .benchd-tmp.* (anywhere) and .benchd-manifest* (but the manifest
# itself, at the root) are data like any other; only the destination's
# .benchd-tmp.* that are not in the manifest are a stage's leftovers
rs="$tmp/rsv"
mkdir -p "$rs/sub"
for f in .benchd-tmp.mine sub/.benchd-tmp.1234.0.1 .benchd-manifest-notes .benchd-manifest.txt sub/.benchd-manifest \
         data.bin; do
    echo "$f" > "$rs/$f"
done
out=$("$BENCHCTL" stage --local --src "$rs" --dst "$tmp/rsv-dst" --name rsv 2>&1); rc=$?
is "names like the stager's own: exit 0" "$rc" 0
like "  all 6 files staged" "$out" "^staged 'rsv' in $tmp/rsv-dst: 6 files, .*: 6 copied"
check "  an exact copy" check_tree "$rs" "$tmp/rsv-dst"
check "  in the manifest" grep -q '^f .* sub/.benchd-tmp.1234.0.1$' "$rs/.benchd-manifest"
echo left > "$tmp/rsv-dst/sub/.benchd-tmp.99.0.1"
out=$("$BENCHCTL" stage --local --src "$rs" --dst "$tmp/rsv-dst" --name rsv 2>&1)
like "  staged again: all present" "$out" "^staged 'rsv' in $tmp/rsv-dst: 6 files, .*: 0 copied, 6 already present"
like "  a real leftover removed" "$out" "removed 1 temporary file left by an interrupted stage"
check "  the staged ones kept" check_tree "$rs" "$tmp/rsv-dst"
like "  verify-only: all match" "$("$BENCHCTL" stage --local --dst "$tmp/rsv-dst" --name rsv --verify-only 2>&1)" \
     "^verified 'rsv' in $tmp/rsv-dst: 6 files, .*all match"
echo "my notes" > "$tmp/rsv/.benchd-manifest.mine" && mv "$tmp/rsv/.benchd-manifest.mine" "$tmp/rsv/.benchd-manifest"
out=$("$BENCHCTL" stage --local --src "$rs" --dst "$tmp/rsv-dst2" --name rsv2 2>&1); rc=$?
is "a source file .benchd-manifest that is not a manifest: refused" "$rc" 1
like "  naming it" "$out" "the source '$rs' holds '.benchd-manifest', which is not a benchd manifest: .*rename it"
is "  and left alone" "$(cat "$rs/.benchd-manifest")" "my notes"

# ---- sparse files keep their holes (every copy method) ------------------------------------
sp="$tmp/sparse"
mkdir -p "$sp"
truncate -s 64M "$sp/middle.bin" && printf 'data' | dd of="$sp/middle.bin" bs=1 seek=$((20 << 20)) conv=notrunc 2>/dev/null
printf 'head' > "$sp/tail-hole.bin" && truncate -s 32M "$sp/tail-hole.bin"
truncate -s 16M "$sp/all-hole.bin"
blocks() { du -k "$1" | cut -f1; }   # KiB allocated
if [ "$(blocks "$sp/middle.bin")" -gt 1024 ]; then
    skip 10 "the filesystem of $tmp makes no sparse files"
else
    for method in readwrite copy_file_range sendfile; do
        out=$("$BENCHCTL" stage --local --src "$sp" --dst "$tmp/sparse-$method" --name "sparse-$method" \
              --copy-method "$method" 2>&1); rc=$?
        is "sparse files, $method: exit 0" "$rc" 0
        check "  an exact copy" check_tree "$sp" "$tmp/sparse-$method"
        is "  with its holes (KiB allocated at most 1 MiB)" \
           "$(for f in "$tmp/sparse-$method"/*.bin; do [ "$(blocks "$f")" -le 1024 ] || echo "$f: $(blocks "$f") KiB"; done)" ""
    done
    like "  verify-only: all match" "$("$BENCHCTL" stage --local --src "$sp" --dst "$tmp/sparse-readwrite" --verify-only 2>&1)" \
         "^verified .*: 3 files, .*all match"
fi

# ---- errors ----------------------------------------------------------------------------
out=$("$BENCHCTL" stage --src "$src" --dst "$dst" 2>&1); rc=$?
is "no --local: usage error" "$rc" 2
like "  naming the choices" "$out" "say where to stage: --local, --system SYSTEM or --nodes N1,N2"
out=$(env -u BENCHD_TOKEN "$BENCHCTL" stage --system local --src "$src" --dst "$dst" \
      --token-file "$tmp/no-such-token" 2>&1); rc=$?
is "--system without benchd's token: exit 1" "$rc" 1
like "  naming the token file" "$out" "cannot read the token file '$tmp/no-such-token'"
out=$(BENCHD_TOKEN=0123456789abcdef "$BENCHCTL" stage --system 4xlocal --src "$src" --dst "$dst" 2>&1); rc=$?
is "--system of 4 nodes that names none: exit 3, nothing staged on this node alone" "$rc" 3
like "  saying so" "$out" "system '4xlocal': 4 nodes, and no benchd.hosts"
out=$(BENCHD_TOKEN=0123456789abcdef "$BENCHCTL" stage --nodes 127.0.0.1:1,127.0.0.1:2 --src "$src" --dst "$dst" 2>&1); rc=$?
is "--nodes whose benchd is not there: exit 4 (unreachable)" "$rc" 4
like "  naming each node" "$out" "node 127.0.0.1:2: .*(Couldn't connect|refused)"
like "no --dst" "$("$BENCHCTL" stage --local --src "$src" 2>&1)" "missing --dst DIR"
like "bad --bwlimit" "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --bwlimit fast 2>&1)" "--bwlimit: expected MB/s above 0, got 'fast'"
like "bad --fsync" "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --fsync sometimes 2>&1)" "--fsync: expected none, end or file"
like "bad --workers" "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --workers 0 2>&1)" "--workers: expected a number from 1 to 256"
like "bad name" "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --name ../x 2>&1)" "invalid dataset name '../x'"
like "--verify-only with --delete" "$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify-only --delete 2>&1)" "no --delete or --verify with it"
out=$("$BENCHCTL" stage --local --src "$tmp/nope" --dst "$tmp/d-nope" 2>&1); rc=$?
is "a missing source fails" "$rc" 1
like "  with the reason" "$out" "cannot open source directory '$tmp/nope': No such file or directory"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$src/train2017/copy" 2>&1); rc=$?
is "a destination inside the source is refused" "$rc" 1
like "  as overlapping" "$out" "the source '$src' and the destination '$src/train2017/copy' overlap"
check "  without creating it in the source" test ! -e "$src/train2017/copy"
like "so is a source inside the destination" "$("$BENCHCTL" stage --local --src "$src/train2017" --dst "$src" --name t 2>&1)" "overlap"
like "and the same directory twice" "$("$BENCHCTL" stage --local --src "$src" --dst "$src/" --name t 2>&1)" "overlap"
"$BENCHCTL" stage --local --src "$src" --dst "$tmp/locked" --name locked -q >/dev/null 2>&1
flock "$tmp/locked" -c "\"$BENCHCTL\" stage --local --src \"$src\" --dst \"$tmp/locked\" --name locked >\"$tmp/out\" 2>&1"; rc=$?
is "a destination another stage holds is refused" "$rc" 1
like "  saying so" "$(cat "$tmp/out")" "destination '$tmp/locked' is being staged by another process"
like "  leaving the other's state file alone" "$(cat "$state/locked.state")" "state=complete"
flock "$state/locked.lock" -c "\"$BENCHCTL\" stage --local --src \"$src\" --dst \"$tmp/locked2\" --name locked >\"$tmp/out\" 2>&1"; rc=$?
is "a name another stage holds, to another destination, is refused" "$rc" 1
like "  saying so" "$(cat "$tmp/out")" "dataset 'locked' is being staged by another process \(give this one another --name\)"
like "  leaving its state file alone" "$(cat "$state/locked.state")" "dst=$tmp/locked\$"
mkdir -p "$tmp/empty-dst"
out=$("$BENCHCTL" stage --local --dst "$tmp/empty-dst" --name x --verify-only 2>&1); rc=$?
is "verify-only with no manifest anywhere fails" "$rc" 1
like "  asking for --src" "$out" "no manifest in '$tmp/empty-dst'.*give the source with --src"
mkdir -p "$tmp/badm" && echo "benchd-manifest 1" > "$tmp/badm/.benchd-manifest"
like "a truncated destination manifest is a located error" \
     "$("$BENCHCTL" stage --local --dst "$tmp/badm" --name x --verify-only 2>&1)" "badm/.benchd-manifest: truncated manifest"
like "manifest of a missing directory" "$("$BENCHCTL" manifest "$tmp/nope" 2>&1)" "cannot open source directory"
done_testing

#!/bin/bash
# benchctl dataset fetch, without the internet: a loopback HTTP server
# (tests/range-server.py, started and stopped here) serves archives made in
# COCO 2017's layout (train2017.zip, val2017.zip, annotations_trainval2017.zip
# of a generated dataset), with a table of their sizes and SHA-1 made here.
# A full fetch (index, manifest, check); a second one fetches nothing; a
# fetch killed half way and resumed (no byte asked for twice beyond the
# ranges in flight); a server that drops connections; one that fails; one
# that ignores ranges; a corrupted archive refused by name; a disk without
# room refused before any byte; --from, --splits, bad tables, a member
# that climbs out of the tree.
. "${srcdir:-.}/tests/lib.sh"
own_servers
"$top_builddir/benchd-dataset" dataset fetch --help >/dev/null 2>&1 ||
    "$BENCHCTL" dataset fetch --help >/dev/null 2>&1 || skip_all "benchctl dataset fetch not built"
command -v zip >/dev/null || skip_all "zip not installed"
SERVER="$srcdir/tests/range-server.py"

# the archives, in the real ones' layout, and their table
"$BENCHCTL" dataset synth --images 150 --val-images 30 --seed 5 --quiet -o "$tmp/src" >/dev/null
mkdir "$tmp/srv"
(cd "$tmp/src" && zip -q -r "$tmp/srv/train2017.zip" train2017 && zip -q -r "$tmp/srv/val2017.zip" val2017 &&
    zip -q -r "$tmp/srv/annotations_trainval2017.zip" annotations)
table() {   # table FILE DIR [tops]: the table of the archives in DIR (tops: with unpacks_to)
    /usr/bin/python3 - "$1" "$2" "${3:-}" <<'EOF_PY'
import hashlib, json, os, sys
out, d, tops = sys.argv[1], sys.argv[2], sys.argv[3]
files = []
for name, split, top in (("annotations_trainval2017.zip", "annotations", "annotations"), ("val2017.zip", "val", "val2017"),
                         ("train2017.zip", "train", "train2017")):
    data = open(os.path.join(d, name), "rb").read()
    files.append({"name": name, "split": split, "url": "http://images.invalid/zips/" + name, "bytes": len(data),
                  "sha1": hashlib.sha1(data).hexdigest(), "source": "made by the test"})
    if tops:
        files[-1]["unpacks_to"] = top
json.dump({"name": "coco2017", "kind": "dataset", "files": files}, open(out, "w"), indent=1)
EOF_PY
}
table "$tmp/table.json" "$tmp/srv"
total=$(cat "$tmp"/srv/*.zip | wc -c)

# serve DIR [OPTIONS]: a server on DIR; $url its address, $log its log
serve() {
    local dir=$1; shift
    [ -n "${spid:-}" ] && stop_pid "$spid"
    rm -f "$tmp/port"
    log=$tmp/log.$RANDOM
    /usr/bin/python3 "$SERVER" "$dir" --port-file "$tmp/port" --log "$log" "$@" &
    spid=$!
    pids+=("$spid")
    wait_until 20 test -s "$tmp/port"
    url=http://127.0.0.1:$(cat "$tmp/port")
    : > "$log"
}
served() { awk '$1 == "GET" { s += $5 } END { print s + 0 }' "$log"; }
fetch() { "$BENCHCTL" dataset fetch coco2017 --table "$tmp/table.json" --mirror "$url" --chunk-size 256K "$@"; }
tree_sum() { (cd "$1" && find train2017 val2017 annotations -type f -name '*.j*' | sort | xargs sha1sum | sha1sum); }
want=$(tree_sum "$tmp/src")

# 1. the whole dataset
serve "$tmp/srv"
out=$(fetch -o "$tmp/d1/coco" 2>"$tmp/err"); rc=$?
is "a full fetch: exit 0" "$rc" 0
like "  each archive verified" "$out" "^train2017.zip: $tmp/d1/downloads/train2017.zip, [0-9.]+ MB verified \(.* fetched now\)"
like "  each unpacked on threads" "$out" "^val2017.zip: unpacked into $tmp/d1/coco: 30 files, .*, on [0-9]+ threads?"
is "  the tree the trainers read, every file as made" "$(tree_sum "$tmp/d1/coco")" "$want"
like "  the annotation index built" "$out" "instances_train2017.json: index built: 150 images"
check "  the manifest stored" test -s "$tmp/d1/coco/.benchd-manifest"
like "  and the check run" "$out" "^dataset check $tmp/d1/coco:"
like "  the usable images counted" "$out" "usable_for_training +[1-9][0-9]*"
is "  every byte asked for once" "$(served)" "$total"
like "  ranges of 256 KiB" "$(cat "$log")" "GET train2017.zip 262144 524288 262144 206"
check "  the archives kept beside it (as MLPerf's scripts keep them)" test -f "$tmp/d1/downloads/train2017.zip"
unlike "  no journal or part left" "$(ls "$tmp/d1/downloads")" "part"
unlike "  no line redrawn where standard error is a file" "$(cat "$tmp/err")" $'\r'
out=$(fetch -o "$tmp/d1/coco" 2>&1); rc=$?
is "again: exit 0" "$rc" 0
is "  nothing fetched" "$(served)" "$total"
like "  nothing unpacked again" "$out" "train2017.zip: unpacked into $tmp/d1/coco before"
# a stamp is not taken on its word: the tree it names deleted, it is unpacked again
rm -rf "$tmp/d1/coco/val2017"
out=$(fetch -o "$tmp/d1/coco" --no-check 2>&1); rc=$?
is "a split's tree deleted since: exit 0" "$rc" 0
like "  said" "$out" "^val2017.zip: unpacked into $tmp/d1/coco before, but $tmp/d1/coco/val2017 is gone: unpacking it again"
like "  unpacked again from the archive kept" "$out" "^val2017.zip: unpacked into $tmp/d1/coco: 30 files"
like "  the others left as they are" "$out" "^train2017.zip: unpacked into $tmp/d1/coco before$"
is "  the same tree" "$(tree_sum "$tmp/d1/coco")" "$want"
is "  nothing fetched" "$(served)" "$total"
# a directory of the same name that no fetch made: never replaced, and said
# before any byte where the table names what each archive unpacks into
table "$tmp/table-tops.json" "$tmp/srv" tops
mkdir -p "$tmp/d1x/coco/val2017"; echo mine > "$tmp/d1x/coco/val2017/keep"
: > "$log"
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/table-tops.json" --mirror "$url" -o "$tmp/d1x/coco" 2>&1); rc=$?
is "a directory already there (unpacks_to): exit 1" "$rc" 1
like "  before anything is fetched, in one line" "$out" \
    "^benchctl: dataset fetch: $tmp/d1x/coco/val2017 is already there and no fetch into $tmp/d1x/coco unpacked it .*: nothing fetched$"
is "  no byte asked for" "$(served)" 0
is "  what was there untouched" "$(cat "$tmp/d1x/coco/val2017/keep")" mine
# without unpacks_to: found from the archive's members, before one is out
mkdir -p "$tmp/d1y/coco/val2017"; echo mine > "$tmp/d1y/coco/val2017/keep"
out=$(fetch -o "$tmp/d1y/coco" --splits val --no-check 2>&1); rc=$?
is "a directory already there (the members say so): exit 1" "$rc" 1
like "  named, nothing unpacked" "$out" "val2017.zip: '$tmp/d1y/coco/val2017' is already there \(not replaced\): nothing unpacked"
is "  what was there untouched" "$(ls "$tmp/d1y/coco/val2017")" keep
unlike "  no staging directory left" "$(ls -A "$tmp/d1y/coco")" "unpack"

# on a terminal, a bar redrawn in place: bytes, rate, time left (script(1)
# gives the fetch a terminal)
if command -v script >/dev/null; then
    serve "$tmp/srv" --rate 2000000
    script -qec "'$BENCHCTL' dataset fetch coco2017 --table '$tmp/table.json' --mirror '$url' -o '$tmp/d1t/coco' --no-check" \
        /dev/null > "$tmp/tty" 2>&1
    like "on a terminal: the bar redrawn in place" "$(cat "$tmp/tty")" \
        $'\r\033\\[Kdataset fetch: \\[[#.]{20}\\] +[0-9]+% [0-9.]+ [kMG]?B of [0-9.]+ MB fetched, [0-9.]+ [kMG]?B/s, [0-9]+s elapsed, ([0-9]+s|--) left'
else
    skip 1 "script(1) not installed: no terminal to draw on"
fi

# killed_half_way DIR: a fetch into DIR/coco from a slow server, killed -9
# once three ranges of train2017.zip are recorded; $first: the bytes served
killed_half_way() {
    local kdir=$1     # seen by the eval inside wait_until
    serve "$tmp/srv" --rate 400000
    "$BENCHCTL" dataset fetch coco2017 --table "$tmp/table.json" --mirror "$url" --chunk-size 256K -o "$kdir/coco" \
        --no-check --quiet >/dev/null 2>&1 &
    local fpid=$!
    wait_until 60 eval '[ "$(grep -c "^c " "$kdir/downloads/train2017.zip.part.journal" 2>/dev/null)" -ge 3 ]'
    kill -KILL "$fpid"; wait "$fpid" 2>/dev/null
    sleep 0.5
    first=$(served)
}

# 2. killed half way, then resumed: only the ranges in flight again
killed_half_way "$tmp/d2"
kept=$(grep -c '^c ' "$tmp/d2/downloads/train2017.zip.part.journal")
check "killed half way: $first bytes served, $kept chunks of train2017.zip recorded" [ "$first" -gt 0 -a "$first" -lt "$total" ]
out=$(fetch -o "$tmp/d2/coco" --quiet 2>&1); rc=$?
is "  resumed: exit 0" "$rc" 0
like "  said so" "$out" "train2017.zip: .* verified \(.* fetched now, the rest kept from before\)"
is "  the same tree" "$(tree_sum "$tmp/d2/coco")" "$want"
again=$(( $(served) - total ))
check "  bytes asked for twice: $again, at most the 4 ranges in flight (4 x 256 KiB)" [ "$again" -le $((4 * 262144)) ]

# 2b. killed, then the machine restarted (the journal's boot id another): the
# kept ranges read again and checked, a damaged one fetched again
killed_half_way "$tmp/d2b"
sed -i 's/^boot .*/boot 00000000-0000-0000-0000-000000000000/' "$tmp/d2b/downloads/train2017.zip.part.journal"
rec=$(awk '$1 == "c" { print $2; exit }' "$tmp/d2b/downloads/train2017.zip.part.journal")
flip_byte "$tmp/d2b/downloads/train2017.zip.part" $((rec * 262144 + 1000))     # in a range recorded whole
serve "$tmp/srv"
out=$(fetch -o "$tmp/d2b/coco" --no-check 2>&1); rc=$?
is "after a restart: exit 0" "$rc" 0
like "  the check of the kept ranges said" "$out" \
    "train2017.zip: the machine restarted since [0-9]+ of its bytes were fetched: reading them again to check them"
is "  the same tree" "$(tree_sum "$tmp/d2b/coco")" "$want"
like "  the damaged range asked for again" "$(cat "$log")" "GET train2017.zip $((rec * 262144)) "
again=$(( first + $(served) - total ))
check "  bytes asked for twice: $again, the damaged range and at most the 4 in flight" \
    [ "$again" -ge 262144 -a "$again" -le $((5 * 262144)) ]

# 3. connections dropped half way through a range: retried from the byte reached
serve "$tmp/srv" --drop-after 100000 --drop-times 3
out=$(fetch -o "$tmp/d3/coco" --retry-delay 0.1 --no-check 2>&1); rc=$?
is "dropped connections: exit 0" "$rc" 0
like "  each retry said" "$out" "bytes [0-9]+-[0-9]+: .*; retrying from byte [0-9]+ in 0.[0-9] s"
is "  no byte fetched twice" "$(served)" "$total"
is "  the same tree" "$(tree_sum "$tmp/d3/coco")" "$want"

# 4. a server that keeps failing: the file named, what was fetched kept
serve "$tmp/srv" --fail-status 503 --fail-times 1000
out=$(fetch -o "$tmp/d4/coco" --retries 2 --retry-delay 0.05 --no-check 2>&1); rc=$?
is "HTTP 503 every time: exit 1" "$rc" 1
like "  in one line naming the file and the answer" "$(tail -1 <<<"$out")" \
    "^benchctl: dataset fetch: [a-z_0-9]+.zip: $url/[a-z_0-9]+.zip: bytes [0-9]+-[0-9]+: HTTP 503 \(3 tries\)$"
check "  the journal kept to resume" test -s "$tmp/d4/downloads/train2017.zip.part.journal"
check "  nothing unpacked" test ! -e "$tmp/d4/coco/train2017"

# 5. a server that ignores ranges: one stream
serve "$tmp/srv" --no-ranges
out=$(fetch -o "$tmp/d5/coco" --no-check 2>&1); rc=$?
is "a server without ranges: exit 0" "$rc" 0
is "  the same tree" "$(tree_sum "$tmp/d5/coco")" "$want"
# ... that drops a connection: the stream again from byte 0, after the delay
serve "$tmp/srv" --no-ranges --drop-after 100000 --drop-times 5    # the 4 first answers may be of ranges the fetch gives up
out=$(fetch -o "$tmp/d5d/coco" --retry-delay 0.1 --no-check --splits val 2>&1); rc=$?
is "  one that drops a connection: exit 0" "$rc" 0
like "  said" "$out" "val2017.zip: .* at byte [0-9]+ \(the server sends no ranges\); again from byte 0 in 0.1 s"
# (what the server counts as sent includes what filled the socket of each
# ranged request it answered whole before the fetch hung up on it: four)
vsize=$(stat -c %s "$tmp/srv/val2017.zip")
check "  not fetched over and over: $(served) bytes served of $vsize" [ "$(served)" -le $((8 * vsize)) ]

# 6. a corrupted archive: refused by name, removed, nothing unpacked
mkdir "$tmp/bad"
cp "$tmp"/srv/*.zip "$tmp/bad/"
flip_byte "$tmp/bad/val2017.zip" 500000
serve "$tmp/bad"
out=$(fetch -o "$tmp/d6/coco" --splits val,annotations 2>&1); rc=$?
is "a corrupted archive: exit 1" "$rc" 1
like "  named, with both digests" "$(tail -1 <<<"$out")" \
    "^benchctl: dataset fetch: val2017.zip: sha1 is [0-9a-f]{40}, the published [0-9a-f]{40}: not the published file \(removed; fetch it again\)$"
check "  not left to be taken" test ! -e "$tmp/d6/downloads/val2017.zip" -a ! -e "$tmp/d6/downloads/val2017.zip.part"
check "  nothing unpacked" test ! -e "$tmp/d6/coco/val2017"
like "  the other archive is kept, verified" "$out" "^annotations_trainval2017.zip: .* verified"

# 7. a disk without room: refused before any byte
if [ "$(id -u)" = 0 ] && command -v unshare >/dev/null; then
    mkdir "$tmp/small"
    serve "$tmp/srv"
    out=$(unshare -m sh -c 'mount -t tmpfs -o size=4m tmpfs "$1" && shift && "$@"' sh "$tmp/small" \
        "$BENCHCTL" dataset fetch coco2017 --table "$tmp/table.json" --mirror "$url" -o "$tmp/small/coco" 2>&1); rc=$?
    is "a 4 MB disk: exit 1" "$rc" 1
    like "  said before any byte" "$out" "^benchctl: dataset fetch: $tmp/small/coco: [0-9.]+ MB free, [0-9.]+ MB needed \(.* of archives to fetch, the rest unpacked\): nothing fetched$"
    is "  nothing asked of the server" "$(served)" 0
    # an archive of a few kB whose member takes 6 MB: the room its central
    # directory says is checked before any member is out
    mkdir "$tmp/dense"
    /usr/bin/python3 - "$tmp/dense/annotations_trainval2017.zip" <<'EOF_PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("annotations/instances_val2017.json", '{"images": [], "annotations": [], "categories": []}' + " " * 6000000)
EOF_PY
    cp "$tmp/srv/val2017.zip" "$tmp/srv/train2017.zip" "$tmp/dense/"
    table "$tmp/dense.json" "$tmp/dense"
    out=$(unshare -m sh -c 'mount -t tmpfs -o size=4m tmpfs "$1" && shift && "$@"' sh "$tmp/small" \
        "$BENCHCTL" dataset fetch coco2017 --table "$tmp/dense.json" --from "$tmp/dense" --splits annotations \
        -o "$tmp/small/coco" 2>&1); rc=$?
    is "members larger than their archive on a 4 MB disk: exit 1" "$rc" 1
    like "  refused before unpacking" "$out" "annotations_trainval2017.zip: its 1 files take 6000051 bytes, $tmp/small/coco has [0-9]+ free: nothing unpacked$"
else
    skip 5 "a disk without room: needs root and unshare for a tmpfs"
fi

# 8. --from: archives already on disk, verified and unpacked, no server
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/table.json" --from "$tmp/srv" -o "$tmp/d8/coco" --no-check 2>&1); rc=$?
is "--from DIR: exit 0" "$rc" 0
is "  the same tree" "$(tree_sum "$tmp/d8/coco")" "$want"
check "  the archives left where they were" test -f "$tmp/srv/train2017.zip" -a ! -e "$tmp/srv/train2017.zip.unpacked"
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/table.json" --from "$tmp/srv" -o "$tmp/d8/coco" --no-check 2>&1); rc=$?
is "  again: exit 0" "$rc" 0
like "  nothing unpacked again" "$out" "^train2017.zip: unpacked into $tmp/d8/coco before"
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/table.json" --from "$tmp/bad" -o "$tmp/d8b/coco" 2>&1); rc=$?
is "--from a corrupted archive: exit 1" "$rc" 1
like "  named" "$out" "val2017.zip: SHA-1 of '$tmp/bad/val2017.zip' is [0-9a-f]+, the published [0-9a-f]+: not the published file"

# --remove-archives: each archive gone once unpacked; run again, nothing is
# fetched; into another directory, all of it again
serve "$tmp/srv"
out=$(fetch -o "$tmp/d8r/coco" --remove-archives --no-check 2>&1); rc=$?
is "--remove-archives: exit 0" "$rc" 0
is "  the archives gone, the stamps kept" "$(ls "$tmp/d8r/downloads" | tr '\n' ' ')" \
    "annotations_trainval2017.zip.unpacked train2017.zip.unpacked val2017.zip.unpacked "
out=$(fetch -o "$tmp/d8r/coco" --remove-archives --no-check 2>&1); rc=$?
is "  again: exit 0, nothing fetched" "$rc $(served)" "0 $total"
out=$(fetch -o "$tmp/d8r/other" --archives "$tmp/d8r/downloads" --no-check 2>&1); rc=$?
is "  into another directory: exit 0, all of it fetched again" "$rc $(served)" "0 $((2 * total))"

# 9. --splits
serve "$tmp/srv"
out=$(fetch -o "$tmp/d9/coco" --splits val,annotations 2>&1); rc=$?
is "--splits val,annotations: exit 0" "$rc" 0
is "  only those fetched" "$(awk '$1 == "GET" { print $2 }' "$log" | sort -u | tr '\n' ' ')" "annotations_trainval2017.zip val2017.zip "
like "  and checked" "$out" "  val2017:"
out=$(fetch -o "$tmp/d9/coco" --splits val,test 2>&1); rc=$?
is "--splits naming a part there is not: exit 2" "$rc" 2
like "  names the parts" "$out" "--splits: 'val,test' names a part coco2017 does not have \(it has: annotations, val, train\)"

# --checksums: the bundled coco2017 table, archives of one's own at a mirror
# with their sha256sum (or BSD-style) lines, sizes from the server
(cd "$tmp/srv" && sha256sum ./*.zip) > "$tmp/SHA256SUMS"
out=$("$BENCHCTL" dataset fetch coco2017 --mirror "$url" --checksums "$tmp/SHA256SUMS" -o "$tmp/d9s/coco" --no-check 2>&1); rc=$?
is "--checksums SHA256SUMS with the bundled table: exit 0" "$rc" 0
is "  the same tree" "$(tree_sum "$tmp/d9s/coco")" "$want"
(cd "$tmp/srv" && sha1sum --tag val2017.zip) > "$tmp/SUMS.bsd"
sed -i -E 's/= ([0-9a-e])/= f/; t; s/= f/= 0/' "$tmp/SUMS.bsd"     # another first digit
out=$("$BENCHCTL" dataset fetch coco2017 --mirror "$url" --checksums "$tmp/SUMS.bsd" --splits val -o "$tmp/d9b/coco" 2>&1); rc=$?
is "  a BSD-style line of another digest: exit 1" "$rc" 1
like "  the archive refused" "$out" "val2017.zip: sha1 is [0-9a-f]{40}, the published [0-9a-f]{40}: not the published file"
printf 'd41d8cd98f00b204e9800998ecf8427e  val2017.zip\n' > "$tmp/MD5SUMS"
out=$("$BENCHCTL" dataset fetch coco2017 --checksums "$tmp/MD5SUMS" -o "$tmp/d9m" 2>&1); rc=$?
is "  an MD5 list: exit 3" "$rc" 3
is "  said" "$out" "benchctl: dataset fetch: $tmp/MD5SUMS:1: a digest of 32 hex digits: SHA-1 (40) and SHA-256 (64) are checked"

# 10. bad tables and bad archives
printf '{"name": "coco2017", "kind": "dataset", "files": [{"name": "a.zip", "url": "http://h/a.zip", "sha1": "12", "source": "x"}]}' > "$tmp/t1.json"
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/t1.json" -o "$tmp/d10" 2>&1); rc=$?
is "a table with a short SHA-1: exit 3" "$rc" 3
is "  the field named" "$out" "benchctl: dataset fetch: $tmp/t1.json: files[0].sha1: expected 40 hex digits"
printf '{"name": "coco2017", "kind": "dataset", "files": [{"name": "a.zip", "url": "http://h/a.zip", "source": "x"}]}' > "$tmp/t2.json"
like "a table without digests: refused" "$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/t2.json" 2>&1)" \
    "files\[0\].: no digest \(sha256 or sha1\): a file is never taken unchecked"
printf '{"name": "coco2017", "kind": "dataset", "files": [{"name": "a.zip", "url": "http://h/a.zip", "sha1": "%s", "source": "x", "unpacks_to": "../up"}]}' \
    "$(printf '%040d' 0)" > "$tmp/t3.json"
is "unpacks_to that is not a plain name: the field named" "$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/t3.json" 2>&1)" \
    "benchctl: dataset fetch: $tmp/t3.json: files[0].unpacks_to: '../up' is not a plain name"
like "an unknown dataset: the known ones named" "$("$BENCHCTL" dataset fetch imagenet 2>&1)" "no dataset 'imagenet' \(known: coco2017\)"
mkdir "$tmp/evil"
/usr/bin/python3 - "$tmp/evil/val2017.zip" <<'EOF_PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("val2017/ok.jpg", b"x" * 100)
    z.writestr("../escaped.txt", b"out of the tree")
EOF_PY
cp "$tmp/srv/annotations_trainval2017.zip" "$tmp/srv/train2017.zip" "$tmp/evil/"
table "$tmp/evil.json" "$tmp/evil"
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/evil.json" --from "$tmp/evil" -o "$tmp/d10/coco" --splits val 2>&1); rc=$?
is "a member that climbs out of the tree: exit 1" "$rc" 1
like "  named" "$out" "val2017.zip: member '../escaped.txt': not a relative path inside the archive"
check "  nothing written outside, nothing left half unpacked" \
    test ! -e "$tmp/d10/coco/escaped.txt" -a ! -e "$tmp/d10/escaped.txt" -a ! -e "$tmp/d10/coco/val2017" \
    -a ! -e "$tmp/d10/coco/.unpack-val2017.zip"
mkdir "$tmp/dup"
/usr/bin/python3 - "$tmp/dup/val2017.zip" <<'EOF_PY'
import sys, warnings, zipfile
warnings.simplefilter("ignore")
with zipfile.ZipFile(sys.argv[1], "w") as z:
    for i in range(8):
        z.writestr("val2017/%d.jpg" % i, b"x" * 100)
    z.writestr("./val2017/./3.jpg", b"y" * 100)     # the same file, spelt otherwise
EOF_PY
cp "$tmp/srv/annotations_trainval2017.zip" "$tmp/srv/train2017.zip" "$tmp/dup/"
table "$tmp/dup.json" "$tmp/dup"
out=$("$BENCHCTL" dataset fetch coco2017 --table "$tmp/dup.json" --from "$tmp/dup" -o "$tmp/d10d/coco" --splits val 2>&1); rc=$?
is "a member twice (threads would write it at once): exit 1" "$rc" 1
like "  named" "$out" "val2017.zip: member 'val2017/3.jpg' is in it twice: refused"
check "  nothing unpacked" test ! -e "$tmp/d10d/coco/val2017" -a ! -e "$tmp/d10d/coco/.unpack-val2017.zip"

# 11. the bundled table
out=$("$BENCHCTL" dataset fetch --list); rc=$?
is "--list: exit 0" "$rc" 0
like "  COCO 2017's archives, sizes and digests" "$out" "train2017.zip +train +19.34 GB +sha1 10ad623668ab00c62c096f0ed636d6aff41faca5"
like "  from images.cocodataset.org" "$out" "http://images.cocodataset.org/zips/val2017.zip"

done_testing

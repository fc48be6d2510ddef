#!/bin/bash
# Faults a stage must survive: kill -9 mid-copy then restart, a source file
# truncated, rewritten or silently changed, an unreadable source file,
# permission denied at the destination, symlinks planted in the destination.
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/stage-lib.sh"
tmp=$(mktemp -d)
chmod 755 "$tmp"
pid=
cleanup() {
    [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null
    chmod -R u+w "$tmp" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
export BENCHD_HOME="$tmp/home"
state="$BENCHD_HOME/stage"

# wait_for CMD...: poll for up to 30 s
wait_for() {
    for _ in $(seq 300); do
        "$@" && return 0
        sleep 0.1
    done
    return 1
}
at_least() { [ "$(staged "$1" | wc -l)" -ge "$2" ]; }
# identity [FILE...]: "inode mtime_ns path" of the given files, or of those staged in $dst
identity() {
    if [ $# -eq 0 ]; then mapfile -t files < <(staged "$dst"); set -- "${files[@]}"; fi
    /usr/bin/python3 -c '
import os, sys
for p in sys.argv[1:]:
    st = os.stat(p); print(st.st_ino, st.st_mtime_ns, p)' "$@"
}

# ---- kill -9 mid-copy, then restart -------------------------------------------------
for variant in fresh prebuilt; do
    src="$tmp/k-$variant/src" dst="$tmp/k-$variant/dst"
    mk_files "$src/data" 40 262144
    [ "$variant" = prebuilt ] && "$BENCHCTL" manifest "$src" -q -o "$tmp/k-$variant.manifest" >/dev/null
    "$BENCHCTL" stage --local --src "$src" --dst "$dst" --name "k-$variant" --bwlimit 2 >/dev/null 2>&1 &
    pid=$!
    check "$variant: the stage is under way" wait_for at_least "$dst/data" 8
    kill -9 "$pid"; wait "$pid" 2>/dev/null; pid=
    like "$variant: the state file says the killed stage was running" "$(cat "$state/k-$variant.state")" "state=running"
    identity > "$tmp/before"
    k=$(wc -l < "$tmp/before")
    left=$(temporaries "$dst")
    echo "# $variant: killed with $k of 40 files in place, $left temporary files"
    verify=
    [ "$variant" = prebuilt ] && verify=--verify
    json=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --name "k-$variant" $verify --json 2>/dev/null)
    is "$variant: the restart completes, copying only what was not in place" \
       "$(printf '%s' "$json" | jfield state progress.files_copied progress.files_present)" "complete $((40 - k)) $k"
    mapfile -t was < <(cut -d' ' -f3 "$tmp/before")
    identity "${was[@]}" > "$tmp/after"
    # same inode and mtime for every file that was in place: none was copied twice
    is "$variant: files in place before the kill were not copied again (same inodes)" \
       "$(cat "$tmp/after")" "$(cat "$tmp/before")"
    is "$variant: no temporary file is left" "$(temporaries "$dst")" 0
    if [ "$left" -gt 0 ]; then
        like "$variant: the leftovers were removed and said so" "$json" "removed $left temporary files? left by an interrupted stage"
    fi
    check "$variant: the tree is complete and exact" check_tree "$src" "$dst"
    check "$variant: and verifies" "$BENCHCTL" stage --local --src "$src" --dst "$dst" --name "k-$variant" --verify-only
    like "$variant: the state file counts the restart's copies" "$(cat "$state/k-$variant.state")" "files_copied=$((40 - k))"
    if [ "$variant" = prebuilt ]; then
        is "prebuilt: the restart with --verify checksummed the files in place" \
           "$(printf '%s' "$json" | jfield progress.files_verified progress.files_hashed)" "$k 0"
    fi
done

# ---- a source file truncated, or rewritten, while it is copied --------------------------
for how in truncated rewritten; do
    src="$tmp/c-$how/src" dst="$tmp/c-$how/dst"
    mk_files "$src" 3 4096
    head -c $((8 << 20)) /dev/urandom > "$src/big.bin"
    "$BENCHCTL" manifest "$src" -q -o /dev/null >/dev/null
    "$BENCHCTL" stage --local --src "$src" --dst "$dst" --name "c-$how" --bwlimit 1 >"$tmp/out" 2>&1 &
    pid=$!
    has_tmp() { [ -n "$(find "$dst" -name '.benchd-tmp.*' -size +0 2>/dev/null)" ]; }
    check "$how: the big file is being copied" wait_for has_tmp
    if [ "$how" = truncated ]; then
        truncate -s 1M "$src/big.bin"
    else
        printf 'changed' | dd of="$src/big.bin" bs=1 seek=4096 conv=notrunc 2>/dev/null
    fi
    wait "$pid"; rc=$?; pid=
    is "$how: the stage fails" "$rc" 1
    if [ "$how" = truncated ]; then
        like "$how: and says which file and why" "$(cat "$tmp/out")" "'big.bin' (is shorter than the manifest says: it was truncated while staged|changed in the source while it was copied)"
    else
        like "$how: and says which file and why" "$(cat "$tmp/out")" "'big.bin' changed in the source while it was copied"
    fi
    check "$how: the file is not presented as staged" test ! -e "$dst/big.bin"
    is "$how: no temporary file is left" "$(temporaries "$dst")" 0
    is "$how: the other files are staged" "$(staged "$dst" | wc -l)" 3
    like "$how: the state file says failed, with the reason" "$(cat "$state/c-$how.state")" "state=failed.*"
    like "$how: the state file names the file" "$(cat "$state/c-$how.state")" "error=.*big.bin"
done

# ---- a source changed behind the manifest's back (same size, mtime restored) ----------
src="$tmp/s/src" dst="$tmp/s/dst"
mk_files "$src" 5 10000
"$BENCHCTL" manifest "$src" -q -o /dev/null >/dev/null
touch -r "$src/f002.bin" "$tmp/s/ref"
printf 'sneaky' | dd of="$src/f002.bin" bs=1 seek=100 conv=notrunc 2>/dev/null
touch -r "$tmp/s/ref" "$src/f002.bin"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --name s 2>&1); rc=$?
is "a silent source change is caught by the checksum (exit 1)" "$rc" 1
like "  naming the file and the way out" "$out" "'f002.bin' does not match its manifest checksum: the source changed since it was checksummed \(--rehash rebuilds the manifest\)"
check "  and the file is not staged" test ! -e "$dst/f002.bin"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --name s --rehash 2>&1); rc=$?
is "--rehash rebuilds the manifest and completes" "$rc" 0
check "  exactly" check_tree "$src" "$dst"

# ---- permissions: an unreadable source file, a destination we may not write ----------------
if [ "$(id -u)" = 0 ]; then
    if command -v setpriv >/dev/null; then
        as_user() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
    else
        as_user() { return 1; }
    fi
    owner=65534:65534
else
    as_user() { "$@"; }
    owner=$(id -u):$(id -g)
fi
if as_user "$BENCHCTL" --version >/dev/null 2>&1; then
    src="$tmp/p/src"
    mk_files "$src" 4 5000
    mkdir -p "$src/sub" && mk_files "$src/sub" 2 100
    chmod 600 "$src/f001.bin"
    [ "$(id -u)" != 0 ] && chmod 000 "$src/f001.bin"
    chmod -R a+rX "$src" && chmod go-r "$src/f001.bin"
    mkdir -p "$tmp/p/state" "$tmp/p/dst" && chown "$owner" "$tmp/p/state" "$tmp/p/dst"
    out=$(as_user "$BENCHCTL" stage --local --src "$src" --dst "$tmp/p/dst" --name p --state-dir "$tmp/p/state" 2>&1); rc=$?
    is "an unreadable source file fails the stage" "$rc" 1
    like "  naming it" "$out" "cannot open 'f001.bin' in the source: Permission denied"
    like "  the rest is staged" "$out" "stage of 'p' failed: 1 error; 5 of 6 files in place"
    check "  and the file is not there" test ! -e "$tmp/p/dst/f001.bin"
    check "  nor a manifest claiming completeness" test ! -e "$tmp/p/dst/.benchd-manifest"

    mkdir -p "$tmp/p/rootdst"
    [ "$(id -u)" != 0 ] && chmod 555 "$tmp/p/rootdst"
    out=$(as_user "$BENCHCTL" stage --local --src "$src" --dst "$tmp/p/rootdst" --name p --state-dir "$tmp/p/state" 2>&1); rc=$?
    is "a destination we may not write fails" "$rc" 1
    like "  at once, saying so" "$out" "cannot write in destination directory '$tmp/p/rootdst': Permission denied"

    mkdir -p "$tmp/p/subdst/sub" && chown "$owner" "$tmp/p/subdst"
    [ "$(id -u)" != 0 ] && chmod 555 "$tmp/p/subdst/sub"
    chmod 644 "$src/f001.bin"
    out=$(as_user "$BENCHCTL" stage --local --src "$src" --dst "$tmp/p/subdst" --name p --state-dir "$tmp/p/state" 2>&1); rc=$?
    is "a destination directory we may not write fails" "$rc" 1
    like "  for the files that go there" "$out" "cannot create 'sub/f000.bin' in the destination: Permission denied"
    like "  and only those" "$out" "3 errors; 4 of 6 files in place"
    like "  and the directory's attributes cannot be set either" "$out" "cannot set the attributes of directory 'sub': Operation not permitted"
else
    echo "# cannot run benchctl as an unprivileged user: permission faults not tested"
fi

# ---- symlinks planted in the destination are replaced, never followed -----------------------
src="$tmp/l/src" dst="$tmp/l/dst"
mk_files "$src/data" 3 1000
echo keep > "$src/file"
mkdir -p "$tmp/l/elsewhere" "$dst"
echo "victim" > "$tmp/l/victim"
ln -s "$tmp/l/elsewhere" "$dst/data"
ln -s "$tmp/l/victim" "$dst/file"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" --verify-only 2>&1)
like "verify-only: a link where a directory should be is the wrong type" "$out" "wrong type: 'data' should be a directory"
out=$("$BENCHCTL" stage --local --src "$src" --dst "$dst" 2>&1); rc=$?
is "stage over planted links exits 0" "$rc" 0
is "nothing was written through the directory link" "$(ls -A "$tmp/l/elsewhere")" ""
is "nothing was written through the file link" "$(cat "$tmp/l/victim")" "victim"
check "the links became a real directory and file" test -d "$dst/data" -a ! -L "$dst/data" -a -f "$dst/file" -a ! -L "$dst/file"
check "the copy is exact" check_tree "$src" "$dst"
done_testing

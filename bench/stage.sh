#!/bin/bash
# bench/stage.sh: benchctl stage against rsync -a and cp -a + xxhsum.
#
# Builds a COCO-like tree (6,000 files of 60-300 KB in train2017/, 500 in
# val2017/, annotation files of 120 MB and 5 MB; about 1.1 GB), then, ROUNDS
# times, with the page cache dropped before each measurement:
#   rsync -a                       into an empty directory
#   cp -a                          into an empty directory
#   cp -a + xxhsum -H2             of every copied file
#   read once                      every file, cat > /dev/null
#   O_DIRECT read                  every file, as many readers as stage has
#                                  workers, nothing hashed or written (the
#                                  disk's floor for any copy)
#   stage                          benchctl stage --local --fsync none, manifest
#                                  stored with the source (the usual case)
#   stage, first time              the same without a stored manifest (it is
#                                  built while copying)
#   stage, copy_file_range         the stored-manifest case with
#                                  --copy-method copy_file_range (the default,
#                                  auto, writes from the hashed buffer here)
#   rsync -a + sync / stage        the same with a sync at the end (the
#                                  default --fsync end)
#   rsync -a no-op / stage resume  onto the complete copies
# and prints the medians and the ratios (targets: stage <= 0.4 x rsync -a,
# stage <= 1.0 x cp -a + xxhsum, resume <= 1.0 x rsync -a no-op).
# Needs root (drop_caches) and 1.2 + 9 x ROUNDS GB in WORKDIR; installs rsync
# and xxhash with apt-get if missing.  Run it at least 6 minutes after any
# big deletion on that filesystem (see below).
#
#   bench/stage.sh [BUILD_DIR] [ROUNDS]        (WORKDIR=/var/tmp by default)
set -euo pipefail
src_dir=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src_dir/build}
rounds=${2:-3}
BENCHCTL="$build/benchctl"
[ -x "$BENCHCTL" ] || { echo "stage bench: no $BENCHCTL (build first)" >&2; exit 1; }
[ "$(id -u)" = 0 ] || { echo "stage bench: needs root to drop the page cache" >&2; exit 1; }
for tool in rsync xxhsum; do
    if ! command -v "$tool" >/dev/null; then
        pkg=$tool; [ "$tool" = xxhsum ] && pkg=xxhash
        echo "stage bench: installing $pkg" >&2
        apt-get install -y "$pkg" >/dev/null 2>&1 || { apt-get update >/dev/null 2>&1 && apt-get install -y "$pkg" >/dev/null; }
    fi
done
work=$(mktemp -d "${WORKDIR:-/var/tmp}/benchd-stage-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ "$(stat -f -c %T "$work")" = tmpfs ] && echo "stage bench: warning: $work is on tmpfs, not a disk" >&2
need=$(( (12 + 90 * rounds) * 100 * 1024 * 1024 ))
avail=$(( $(stat -f -c '%a * %S' "$work") ))
[ "$avail" -gt "$need" ] || { echo "stage bench: $((need >> 30)) GiB needed in $work, $((avail >> 30)) GiB free" >&2; exit 1; }
export BENCHD_HOME="$work/home"

echo "building the COCO-like tree in $work/coco ..." >&2
/usr/bin/python3 - "$work/coco" <<'EOF'
import os, random, sys
root = sys.argv[1]
rng = random.Random(2017)
blob = os.urandom(64 << 20)
def put(path, n):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, 'wb') as f:
        while n > 0:
            k = min(n, 32 << 20)
            off = rng.randrange(0, len(blob) - k)
            f.write(blob[off:off + k])
            n -= k
for d, count in (('train2017', 6000), ('val2017', 500)):
    for _ in range(count):
        # JPEG-like sizes: 60 to 300 KB, most near 100 KB
        put('%s/%s/%012d.jpg' % (root, d, rng.randrange(10**12)), int(rng.triangular(60, 300, 100) * 1024))
put(root + '/annotations/instances_train2017.json', 120 << 20)
put(root + '/annotations/instances_val2017.json', 5 << 20)
EOF
src="$work/coco"
files=$(find "$src" -type f | wc -l)
size=$(du -sh "$src" | cut -f1)
"$BENCHCTL" manifest "$src" -q -o /dev/null >/dev/null
cp "$src/.benchd-manifest" "$work/manifest"

drop() { sync; echo 3 > /proc/sys/vm/drop_caches; }
# t NAME CMD...: one measurement after dropping the page cache, appended to NAME's list
declare -A times
t() {
    local name=$1; shift
    drop
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "stage bench: '$*' failed" >&2; exit 1; }
    t1=$(date +%s.%N)
    times[$name]="${times[$name]:-} $(echo "$t1 - $t0" | bc -l)"
}
cp_xxh() { cp -a "$src" "$1" && find "$1" -type f -print0 | xargs -0 xxhsum -H2 >/dev/null; }
rsync_sync() { rsync -a "$src/" "$1/" && sync; }
read_all() { find "$src" -type f -print0 | xargs -0 cat >/dev/null; }
# the device's floor for any copy: every file read once with O_DIRECT, as
# many readers as stage has workers, nothing hashed or written
read_direct() {
    /usr/bin/python3 - "$src" "$1" <<'PY'
import mmap, os, sys, threading
root, nthreads = sys.argv[1], int(sys.argv[2])
paths = [os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs]
paths.sort(key=lambda p: -os.path.getsize(p))
todo, lock = iter(paths), threading.Lock()
def worker():
    buf = mmap.mmap(-1, 1 << 20)
    while True:
        with lock:
            p = next(todo, None)
        if p is None:
            return
        fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
        try:
            while os.readv(fd, [buf]) == len(buf):
                pass
        finally:
            os.close(fd)
ts = [threading.Thread(target=worker) for _ in range(nthreads)]
for t in ts:
    t.start()
for t in ts:
    t.join()
PY
}
stage() { "$BENCHCTL" stage --local -q --src "$src" --dst "$1" --name "$(basename "$1")" --state-dir "$work/state" "${@:2}"; }
no_manifest() { rm -f "$src/.benchd-manifest"; stage "$@"; local r=$?; cp "$work/manifest" "$src/.benchd-manifest"; return $r; }

# stage's default number of workers
n=$(nproc); w=$((4 * n)); [ "$w" -lt 16 ] && w=16; [ "$w" -gt 64 ] && w=64

# Nothing is deleted until the end: without a journal (as here), ext4 skips
# inodes freed less than 60 s ago, 360 s while their inode table block is
# dirty, when it allocates one, which makes creating files after a deletion
# several times slower for whichever tool comes first.  Every copy goes to a
# new directory instead.
#
# The two rows of each ratio run back to back, those of the main ratio first
# in the round: what ran just before changes the next measurement on this
# kind of VM (after 'read once', a whole-tree read through the page cache, a
# stage reading with O_DIRECT took 1.7 s instead of 1.1-1.3 s), so each
# pair has the same neighbour.
for r in $(seq "$rounds"); do
    echo "round $r of $rounds ..." >&2
    t rsync rsync -a "$src/" "$work/d$r-rsync/"
    t stage stage "$work/d$r-stage" --fsync none
    t stage_first no_manifest "$work/d$r-stage-first" --fsync none
    t read_direct read_direct "$w"
    t cp_xxh cp_xxh "$work/d$r-cpx"
    t cp cp -a "$src" "$work/d$r-cp"
    t stage_cfr stage "$work/d$r-stage-cfr" --fsync none --copy-method copy_file_range
    t read read_all
    t rsync_sync rsync_sync "$work/d$r-rsync-sync"
    t stage_sync stage "$work/d$r-stage-sync"
    t rsync_noop rsync -a "$src/" "$work/d$r-rsync/"
    t stage_noop stage "$work/d$r-stage" --fsync none
done
"$BENCHCTL" stage --local -q --src "$src" --dst "$work/d1-stage" --name d1-stage --state-dir "$work/state" --verify-only >/dev/null ||
    { echo "stage bench: the staged copy does not verify" >&2; exit 1; }

# shellcheck disable=SC2086 # $1 is a list of numbers
median() { printf '%s\n' $1 | sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# the median over rounds of each round's ratio: both sides of a ratio ran
# minutes apart at most, which matters on a machine whose load drifts
ratio() {
    local -a a b
    read -r -a a <<<"${times[$1]}"
    read -r -a b <<<"${times[$2]}"
    local rs="" i
    for i in "${!a[@]}"; do rs="$rs $(echo "${a[$i]} / ${b[$i]}" | bc -l)"; done
    median "$rs"
}
declare -A m
for k in "${!times[@]}"; do m[$k]=$(median "${times[$k]}"); done
printf 'tree:      %s files, %s; %d rounds, page cache dropped before each measurement\n' "$files" "$size" "$rounds"
printf 'machine:   %s CPUs, Linux %s, load average %s; stage uses %d workers (the default)\n' \
    "$n" "$(uname -r)" "$(cut -d' ' -f1-3 /proc/loadavg)" "$w"
printf '%-34s %8s   %s\n' "" "median" "each round (s)"
for k in rsync cp cp_xxh read read_direct stage stage_first stage_cfr rsync_sync stage_sync rsync_noop stage_noop; do
    case $k in
        rsync) label="rsync -a";; cp) label="cp -a";; cp_xxh) label="cp -a + xxhsum of every file";;
        read) label="read every file once";; read_direct) label="read every file, O_DIRECT, $w readers";;
        stage) label="stage (stored manifest)";;
        stage_first) label="stage (no manifest yet)";; rsync_sync) label="rsync -a + sync";;
        stage_cfr) label="stage --copy-method copy_file_range";;
        stage_sync) label="stage --fsync end (default)";; rsync_noop) label="rsync -a, nothing to do";;
        stage_noop) label="stage resume, nothing to do";;
    esac
    read -r -a each <<<"${times[$k]}"
    printf '%-34s %7.2fs  %s\n' "$label" "${m[$k]}" "$(printf ' %.2f' "${each[@]}")"
done
printf '\nratios, median of the rounds (lower is better):\n'
printf '  stage / rsync -a                       %.2f  (target <= 0.4)\n' "$(ratio stage rsync)"
printf '  stage, no manifest yet / rsync -a      %.2f  (target <= 0.4)\n' "$(ratio stage_first rsync)"
printf '  stage, copy_file_range / rsync -a      %.2f\n' "$(ratio stage_cfr rsync)"
printf '  stage / O_DIRECT read (the floor)      %.2f\n' "$(ratio stage read_direct)"
printf '  O_DIRECT read / rsync -a               %.2f  (the best ratio this disk allows)\n' "$(ratio read_direct rsync)"
printf '  stage / (cp -a + xxhsum)               %.2f  (target <= 1.0)\n' "$(ratio stage cp_xxh)"
printf '  stage, no manifest yet / (cp + xxhsum) %.2f  (target <= 1.0)\n' "$(ratio stage_first cp_xxh)"
printf '  stage --fsync end / (rsync -a + sync)  %.2f\n' "$(ratio stage_sync rsync_sync)"
printf '  resume / rsync -a no-op                %.2f  (target <= 1.0)\n' "$(ratio stage_noop rsync_noop)"

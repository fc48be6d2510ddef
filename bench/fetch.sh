#!/bin/bash
# bench/fetch.sh [BUILD_DIR] [ROUNDS] [MB]: benchctl dataset fetch against
# the tools a user would otherwise run, on this machine, alternating rounds,
# medians:
#   1. fetching one archive of MB megabytes (default 1024) from a loopback
#      HTTP server (tests/range-server.py, sendfile): `benchctl dataset fetch
#      --download-only` (4 ranged connections, the SHA-1 verified as it arrives)
#      vs `curl -s -o FILE URL` alone (one connection, nothing verified);
#      target >= 0.8x curl's speed (the disk and the checksum are the floor)
#   2. unpacking it: `benchctl dataset fetch --from DIR --no-check` (the
#      archive verified, then unpacked on every CPU) vs `unzip -q` (one
#      thread, no digest), and the unpacking alone from the fetch's own
#      timing line; target >= 1.5x unzip on 2 cores
# The archive is a zip of COCO-like JPEGs (a generated dataset's images,
# copied under new names until MB is reached), deflated as COCO's are.
set -euo pipefail
build=$(cd "${1:-build}" && pwd)
rounds=${2:-3}
mb=${3:-1024}
src=$(cd "$(dirname "$0")/.." && pwd)
BENCHCTL=$build/benchctl
tmp=$(mktemp -d /var/tmp/bench-fetch.XXXXXX)
spid=
trap '[ -n "$spid" ] && kill "$spid" 2>/dev/null; rm -rf "$tmp"' EXIT
echo "# $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs; $mb MB; $rounds rounds"

# the archive
"$BENCHCTL" dataset synth --images 400 --val-images 1 --size 640 --seed 9 --quiet -o "$tmp/gen" >/dev/null
mkdir -p "$tmp/tree/train2017" "$tmp/srv"
i=0
while [ "$(du -sm "$tmp/tree" | cut -f1)" -lt "$mb" ]; do
    for f in "$tmp"/gen/train2017/*.jpg; do
        cp "$f" "$tmp/tree/train2017/$(printf '%012d' $i).jpg"
        i=$((i + 1))
    done
done
(cd "$tmp/tree" && zip -q -r "$tmp/srv/train2017.zip" train2017)
rm -rf "$tmp/gen" "$tmp/tree"
size=$(stat -c %s "$tmp/srv/train2017.zip")
sha1=$(sha1sum "$tmp/srv/train2017.zip" | cut -d' ' -f1)
echo "# archive: $size bytes, $i JPEGs"
cat > "$tmp/table.json" <<EOF
{ "name": "bench", "kind": "dataset", "files": [ { "name": "train2017.zip", "split": "train",
  "url": "http://127.0.0.1/train2017.zip", "bytes": $size, "sha1": "$sha1", "source": "bench/fetch.sh" } ] }
EOF
/usr/bin/python3 "$src/tests/range-server.py" "$tmp/srv" --port-file "$tmp/port" &
spid=$!
while [ ! -s "$tmp/port" ]; do sleep 0.1; done
url=http://127.0.0.1:$(cat "$tmp/port")

now() { date +%s.%N; }
median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
: > "$tmp/ours" ; : > "$tmp/curl"; : > "$tmp/unzip"; : > "$tmp/from"; : > "$tmp/unpack"
for ((r = 1; r <= rounds; r++)); do
    rm -rf "$tmp/o" "$tmp/c"; mkdir -p "$tmp/c"; sync
    t0=$(now); curl -s -o "$tmp/c/train2017.zip" "$url/train2017.zip"; t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/curl"
    rm -rf "$tmp/c"; sync
    t0=$(now)
    "$BENCHCTL" dataset fetch bench --table "$tmp/table.json" --mirror "$url" -o "$tmp/o/data" --download-only --quiet >/dev/null
    t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/ours"
    rm -rf "$tmp/o/data"; sync
    t0=$(now); unzip -q "$tmp/srv/train2017.zip" -d "$tmp/u"; t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/unzip"
    rm -rf "$tmp/u"; sync
    t0=$(now)
    out=$("$BENCHCTL" dataset fetch bench --table "$tmp/table.json" --from "$tmp/srv" -o "$tmp/f" --no-check --quiet)
    t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/from"
    sed -n 's/.* in \([0-9.]*\) s$/\1/p' <<<"$out" >> "$tmp/unpack"
    rm -rf "$tmp/f" "$tmp/o" "$tmp/downloads"; sync
    echo "# round $r: curl $(tail -1 "$tmp/curl") s, fetch $(tail -1 "$tmp/ours") s, unzip $(tail -1 "$tmp/unzip") s," \
         "fetch --from $(tail -1 "$tmp/from") s (unpacking $(tail -1 "$tmp/unpack") s)"
done
c=$(median < "$tmp/curl"); o=$(median < "$tmp/ours"); u=$(median < "$tmp/unzip"); f=$(median < "$tmp/from")
p=$(median < "$tmp/unpack")
printf 'fetch %s MB: curl %.2f s (%.0f MB/s), benchctl dataset fetch %.2f s (%.0f MB/s): %.2fx curl\n' \
    "$mb" "$c" "$(echo "$size / $c / 1000000" | bc -l)" "$o" "$(echo "$size / $o / 1000000" | bc -l)" "$(echo "$c / $o" | bc -l)"
printf 'unpack: unzip -q %.2f s; fetch --from %.2f s (verify + unpack): %.2fx; the unpacking alone %.2f s: %.2fx unzip\n' \
    "$u" "$f" "$(echo "$u / $f" | bc -l)" "$p" "$(echo "$u / $p" | bc -l)"

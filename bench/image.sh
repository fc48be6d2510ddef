#!/bin/bash
# bench/image.sh: what running in a container image costs (issue #25).
#
#   - the image build: cold (mmdebstrap makes the base: --no-cache) and warm
#     (the base from the cache), and the image's size;
#   - SSD (throughput mode, images/s) and allreduce (bus bandwidth at the
#     largest size) on 'local' (2 ranks, mpirun) with the trainers on the
#     host and in the Charliecloud image, in alternating pairs in one run;
#     the host side runs the same package binaries (extracted from the .deb),
#     so that only the container differs; target: image/host >= 0.98;
#   - the start-up cost of one ch-run per rank: mpirun -np 16 of 'ch-run
#     IMAGE -- true' against 'true', median of N launches.
#
#   bench/image.sh [BUILD_DIR] [PAIRS]
#
# Needs root, a build tree with its packages (make deb), mmdebstrap,
# squashfs-tools and ch-run.  Prints the figures; the CPU model with them.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$src/build}
pairs=${2:-3}
BENCHCTL="$build/benchctl"
[ -x "$BENCHCTL" ] || { echo "image.sh: no $BENCHCTL (build first)" >&2; exit 1; }
ls "$build"/deb/benchd-trainers_*.deb >/dev/null 2>&1 || { echo "image.sh: no packages: make -C $build deb" >&2; exit 1; }
command -v ch-run >/dev/null || { echo "image.sh: ch-run is not installed (charliecloud-runtime)" >&2; exit 1; }
tmp=$(mktemp -d)
export BENCHD_HOME="$tmp/home" BENCHD_SYSTEMS="$src/systems" USER=${USER:-$(id -un)} OMP_WAIT_POLICY=passive
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
trap 'rm -rf "$tmp"' EXIT
cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "# $(date -u +%FT%TZ), $cpu, $(nproc) CPUs"

# ---- build time and size ----
t0=$(date +%s.%N)
"$BENCHCTL" image build --debs "$build/deb" --cache "$tmp/cache" --no-cache -o "$tmp/cold.sqfs" 2>"$tmp/cold.err" >/dev/null ||
    { cat "$tmp/cold.err" >&2; exit 1; }
t1=$(date +%s.%N)
"$BENCHCTL" image build --debs "$build/deb" --cache "$tmp/cache" -o "$tmp/img.sqfs" 2>"$tmp/warm.err" >/dev/null ||
    { cat "$tmp/warm.err" >&2; exit 1; }
t2=$(date +%s.%N)
[ -c /dev/null ] || { echo "image.sh: /dev/null is no longer a character device" >&2; exit 1; }
"$BENCHCTL" image build --debs "$build/deb" --cache "$tmp/cache" --runtime podman -o "$tmp/img.oci.tar" 2>/dev/null >/dev/null
t3=$(date +%s.%N)
printf 'build, cold (mmdebstrap, no cache)   %6.1f s\n' "$(echo "$t1 - $t0" | bc)"
printf 'build, warm (cached base): squashfs  %6.1f s, %5.1f MiB\n' "$(echo "$t2 - $t1" | bc)" \
    "$(echo "$(stat -c %s "$tmp/img.sqfs") / 1048576" | bc -l)"
printf 'build, warm (cached base): oci       %6.1f s, %5.1f MiB\n' "$(echo "$t3 - $t2" | bc)" \
    "$(echo "$(stat -c %s "$tmp/img.oci.tar") / 1048576" | bc -l)"
printf 'base root file system (tar)          %6.1f MiB, %d packages in the image\n' \
    "$(echo "$(stat -c %s "$tmp"/cache/base-*.tar | head -1) / 1048576" | bc -l)" \
    "$("$BENCHCTL" image info --json "$tmp/img.sqfs" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["packages"]))')"

# ---- ch-run start-up at 16 ranks ----
launch() { local t0 t1; t0=$(date +%s%N); mpirun -np 16 --oversubscribe --bind-to none "$@" >/dev/null 2>&1; t1=$(date +%s%N); echo $(( (t1 - t0) / 1000000 )); }
median() { sort -n | awk '{ a[NR] = $1 } END { print (NR % 2) ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }
bare=$(for _ in 1 2 3 4 5 6 7; do launch true; done | median)
inimg=$(for _ in 1 2 3 4 5 6 7; do launch ch-run "$tmp/img.sqfs" -- true; done | median)
printf 'mpirun -np 16 true                   %6d ms (median of 7)\n' "$bare"
printf 'mpirun -np 16 ch-run IMAGE -- true   %6d ms: %.1f ms per rank on %d CPUs\n' "$inimg" \
    "$(echo "($inimg - $bare) / 16" | bc -l)" "$(nproc)"

# ---- throughput: host against image, alternating ----
"$BENCHCTL" dataset synth --images 256 --val-images 16 --seed 1 -o "$tmp/data" >/dev/null
mkdir -p "$tmp/pkg" && dpkg-deb -x "$(ls "$build"/deb/benchd-trainers_*.deb | head -1)" "$tmp/pkg"
common=(--system local --data "$tmp/data" --logdir "$tmp/logs" --runs 1 --set clear_caches=false)
host=(--set "paths.bin=$tmp/pkg/usr/bin")
image=(--set container.runtime=charliecloud --set "container.image=$tmp/img.sqfs" --set container.bin_dir=/usr/bin)
ssd=(--set ssd.benchmark_steps=30 --set ssd.warmup_steps=5 ssd)
ar=(--set allreduce.max_bytes=67108864 --set allreduce.iters=10 allreduce)
last_run() { "$BENCHCTL" runs --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run"])'; }
ssd_rate() {   # images/s of the last run's result
    python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["train_item"]["avg"])' "$tmp/logs/$(last_run)_1.json"
}
ar_rate() {
    "$BENCHCTL" report "$(last_run)" --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["trials"][0]["busbw_gbps"])'
}
: > "$tmp/ssd.host"; : > "$tmp/ssd.image"; : > "$tmp/ar.host"; : > "$tmp/ar.image"
for i in $(seq 1 "$pairs"); do
    for side in host image; do
        declare -n extra=$side
        "$BENCHCTL" submit "${common[@]}" "${extra[@]}" "${ssd[@]}" --wait >/dev/null 2>&1 ||
            { echo "image.sh: SSD on the $side failed: $BENCHCTL report $(last_run)" >&2; exit 1; }
        ssd_rate >> "$tmp/ssd.$side"
        "$BENCHCTL" submit "${common[@]}" "${extra[@]}" "${ar[@]}" --wait >/dev/null 2>&1 ||
            { echo "image.sh: allreduce on the $side failed: $BENCHCTL report $(last_run)" >&2; exit 1; }
        ar_rate >> "$tmp/ar.$side"
        unset -n extra
    done
    echo "# pair $i: SSD $(tail -1 "$tmp/ssd.host") / $(tail -1 "$tmp/ssd.image") images/s," \
         "allreduce $(tail -1 "$tmp/ar.host") / $(tail -1 "$tmp/ar.image") GB/s (host / image)"
done
mean() { awk '{ s += $1 } END { printf "%.3f", s / NR }' "$1"; }
for b in ssd ar; do
    h=$(mean "$tmp/$b.host"); m=$(mean "$tmp/$b.image")
    printf '%-9s host %8s  image %8s  image/host %.3f (target >= 0.98)\n' \
        "$([ $b = ssd ] && echo "SSD" || echo "allreduce")" "$h" "$m" "$(echo "$m / $h" | bc -l)"
done

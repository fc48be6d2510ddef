#!/bin/bash
# Trainer core, data parallel: N ranks on shares of a batch end where one rank
# on the whole batch ends, every rank holds the same parameters, and runs with
# the same seed and ranks repeat bit for bit; with synchronised batch norm
# (--sync-bn) so does training batch norm, which without it differs.
#
# Tolerance: final parameters within 1e-5 of the one-rank run (relative to
# the largest parameter); the gradient sums run in another order in float32,
# the differences observed are below 1e-7.  BatchNorm is frozen for the
# comparison (per-rank batch statistics are not the whole batch's), or
# trained and synchronised.
. "${srcdir:-.}/tests/lib.sh"
T=$top_builddir/tests/helper/trainer-tool
[ -x "$T" ] || skip_all "trainer-tool not built"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
grep -q '^#define HAVE_MPI 1' "$top_builddir/config.h" 2>/dev/null || skip_all "built without MPI"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mpi() { timeout 300 mpirun --allow-run-as-root --oversubscribe -np "$@"; }

common=(--frozen-bn --steps 4 --batch 8 --threads 1 --depth 18 --width 16 --size 32 --seed 5)
"$T" train "${common[@]}" --params-out "$tmp/p1" > "$tmp/out1" 2>&1
is "one rank on the whole batch trains" "$?" 0

within() {   # within FILE_A FILE_B TOL: ok when the relative difference is <= TOL
    "$T" compare "$1" "$2" | awk -v t="$3" '{ for (i = 1; i < NF; i++) if ($i == "relative") r = $(i + 1) } END { print (r != "" && r + 0 <= t + 0) ? "ok" : "off by " r }'
}
losses() { awk '/^step/ { print $4 }' "$1"; }
close_losses() {   # the losses of two runs agree to 1e-5 relative
    paste <(losses "$1") <(losses "$2") | awk '{ d = $1 - $2; if (d < 0) d = -d; if (d > 1e-5 * ($2 < 0 ? -$2 : $2)) bad++ } END { print bad ? "differ" : "same" }'
}

for np in 2 4; do
    mpi "$np" "$T" train "${common[@]}" --bucket-kb 64 --params-out "$tmp/p$np" > "$tmp/out$np" 2>&1
    is "$np ranks: exit 0" "$?" 0
    like "$np ranks: every rank holds the same parameters" "$(cat "$tmp/out$np")" "^ranks $np identical yes"
    is "$np ranks on shares end within 1e-5 of one rank on the whole batch" "$(within "$tmp/p1" "$tmp/p$np" 1e-5)" ok
    is "$np ranks: the same losses as one rank (1e-5)" "$(close_losses "$tmp/out1" "$tmp/out$np")" same
    is "$np ranks: 4 steps logged by rank 0 only" "$(grep -c '^step' "$tmp/out$np")" 4
done

# one allreduce after the backward instead of buckets during it: same result
mpi 2 "$T" train "${common[@]}" --no-overlap --params-out "$tmp/p2n" > "$tmp/out2n" 2>&1
is "2 ranks, no overlap: the same parameters as with bucketed overlap" "$(within "$tmp/p2" "$tmp/p2n" 0)" ok

# training batch norm (per-rank statistics) still keeps the ranks identical
mpi 2 "$T" train --steps 3 --batch 8 --threads 1 --depth 18 --width 16 --size 32 > "$tmp/bn" 2>&1
like "2 ranks, training batch norm: identical parameters" "$(cat "$tmp/bn")" "^ranks 2 identical yes"

# synchronised batch norm (--sync-bn): N ranks of training batch norm end
# where one rank on the whole batch ends, as frozen batch norm does; two
# steps (in the third and fourth, at the schedule's peak rate, float32's
# rounding grows: one rank on oneDNN and one on the reference loops end
# 1.3e-3 apart after four, and so do 2 synchronised ranks and one)
trained=(--steps 2 --batch 8 --threads 1 --depth 18 --width 16 --size 32 --seed 5)
"$T" train "${trained[@]}" --params-out "$tmp/t1" > "$tmp/tout1" 2>&1
is "one rank, training batch norm, on the whole batch: exit 0" "$?" 0
for np in 2 4; do
    mpi "$np" "$T" train "${trained[@]}" --sync-bn --bucket-kb 64 --params-out "$tmp/s$np" > "$tmp/sout$np" 2>&1
    is "$np ranks, synchronised batch norm: exit 0" "$?" 0
    like "$np ranks, synchronised batch norm: every rank holds the same parameters" "$(cat "$tmp/sout$np")" \
         "^ranks $np identical yes"
    is "$np ranks, synchronised batch norm, on shares end within 1e-5 of one rank on the whole batch" \
       "$(within "$tmp/t1" "$tmp/s$np" 1e-5)" ok
    is "$np ranks, synchronised batch norm: the same losses as one rank (1e-5)" \
       "$(close_losses "$tmp/tout1" "$tmp/sout$np")" same
    mpi "$np" "$T" train "${trained[@]}" --bucket-kb 64 --params-out "$tmp/u$np" > /dev/null 2>&1
    is "$np ranks, each its own statistics: more than 1e-2 away from one rank on the whole batch" \
       "$(within "$tmp/t1" "$tmp/u$np" 1e-2 | cut -d' ' -f1-2)" "off by"
done

# same seed, same ranks: bit-identical losses and parameters, run to run
mpi 2 "$T" train "${common[@]}" --params-out "$tmp/p2b" > "$tmp/out2b" 2>&1
is "2 ranks twice: bit-identical losses" "$(losses "$tmp/out2b")" "$(losses "$tmp/out2")"
is "2 ranks twice: bit-identical parameters" "$(within "$tmp/p2" "$tmp/p2b" 0)" ok
"$T" train "${common[@]}" --threads 2 --params-out "$tmp/p1b" > "$tmp/out1b" 2>&1
"$T" train "${common[@]}" --threads 2 --params-out "$tmp/p1c" > "$tmp/out1c" 2>&1
is "1 rank, 2 threads, twice: bit-identical losses" "$(losses "$tmp/out1c")" "$(losses "$tmp/out1b")"

# a batch that does not split over the ranks is refused
out=$(mpi 4 "$T" train "${common[@]}" --batch 6 2>&1 >/dev/null)
like "a batch of 6 over 4 ranks: refused with a message" "$out" "does not split over 4 ranks"
done_testing

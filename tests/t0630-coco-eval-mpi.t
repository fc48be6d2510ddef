#!/bin/bash
# COCO evaluation over MPI ranks (coco_eval_gather_stats): the numbers of one
# process, on every rank, with 1, 2 and 3 ranks.
. "${srcdir:-.}/tests/lib.sh"
T="$top_builddir/tests/unit/test-coco-eval-mpi"
[ -x "$T" ] || skip_all "test-coco-eval-mpi not built (no MPI or no COCO data pipeline)"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for np in 1 2 3; do
    out=$(timeout 120 mpirun -np "$np" "$T" 2>&1); rc=$?
    is "$np ranks: exit 0" "$rc" 0
    is "$np ranks: every check passed" "$(printf '%s\n' "$out" | grep -c '^not ok')" 0
    like "$np ranks: the checks ran" "$out" "^1\.\.[0-9]+"
    printf '%s\n' "$out" | grep '^not ok' -A3 | sed 's/^/#   /'
done
done_testing

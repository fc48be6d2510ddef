#!/bin/bash
# Synchronised batch norm: tests/unit/test-trainer-syncbn under mpirun on 1,
# 2 and 3 ranks, each rank a share of a batch, against one rank's ordinary
# batch norm on the whole batch (outputs, input, weight and bias gradients,
# running statistics; without synchronisation they differ), that batch norm
# being oneDNN's and then the reference loops' (BD_CPU_REF=1).
. "${srcdir:-.}/tests/lib.sh"
T="$top_builddir/tests/unit/test-trainer-syncbn"
[ -x "$T" ] || skip_all "test-trainer-syncbn not built (no MPI)"
command -v mpirun >/dev/null || skip_all "mpirun not installed"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for ref in 0 1; do
    for np in 1 2 3; do
        what="$np rank$([ "$np" = 1 ] || echo s)$([ "$ref" = 1 ] && echo ", BD_CPU_REF=1")"
        out=$(BD_CPU_REF=$ref timeout 120 mpirun -np "$np" "$T" 2>&1); rc=$?
        is "$what: exit 0" "$rc" 0
        is "$what: every check passed" "$(printf '%s\n' "$out" | grep -c '^not ok')" 0
        like "$what: the checks ran" "$out" "^1\.\.[0-9]+"
        printf '%s\n' "$out" | grep '^not ok' -A3 | sed 's/^/#   /'
    done
done
done_testing

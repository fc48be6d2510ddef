#!/bin/bash
# The rendered scripts of every bundled system x workload (and of throughput
# runs and one-node allreduce runs) against the ones recorded in
# tests/fixtures/renders/ (NAME.txt), byte for byte: a change in what a launch script
# does must show here.  The source and build directories and the version
# are replaced by @SRCDIR@, @BUILDDIR@ and @VERSION@, HOME is /home/bench.
# BENCHD_UPDATE_RENDERS=1 writes the fixtures instead (then review the diff).
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fixtures="$srcdir/tests/fixtures/renders"
version=$("$BENCHCTL" --version | sed -n '1s/^benchctl //p')
export HOME=/home/bench
src=$(cd "$srcdir" && pwd -P)
bld=$(cd "$top_builddir" && pwd -P)

render() {   # NAME ARGS...: renders into $tmp/NAME, normalised
    local name=$1 out
    shift
    out=$("$BENCHCTL" render "$@" 2>"$tmp/$name.err")   # the script; a warning (24xp3dn's schedule) aside
    printf '%s\n' "$out" | sed -e "s#$top_builddir#@BUILDDIR@#g" -e "s#$bld#@BUILDDIR@#g" -e "s#$srcdir#@SRCDIR@#g" -e "s#$src#@SRCDIR@#g" \
                               -e "s#benchctl $version#benchctl @VERSION@#g" -e "s#!= $version#!= @VERSION@#g" \
                               -e "s#host's benchctl $version#host's benchctl @VERSION@#g" > "$tmp/$name"
}

systems=$(cd "$srcdir/systems" && ls ./*.json | sed 's#^\./##; s#\.json$##')
for sys in $systems; do
    for w in allreduce ssd maskrcnn; do
        render "$sys.$w.txt" --system "$sys" "$w" --run-id fixed-1
    done
    for w in ssd maskrcnn; do
        render "$sys.$w.tp.txt" --system "$sys" "$w" --run-id fixed-2 --runs 3 \
               --set "$w.benchmark_steps=20" --set "$w.warmup_steps=5"
    done
    render "$sys.allreduce.n1.txt" --system "$sys" allreduce --run-id fixed-3 --runs 2 --set nodes=1
done

if [ -n "${BENCHD_UPDATE_RENDERS:-}" ]; then
    rm -f "$fixtures"/*.txt
    cp "$tmp"/*.txt "$fixtures"/
    echo "# wrote $(ls "$tmp" | wc -l) fixtures to $fixtures"
fi
for f in "$tmp"/*.txt; do
    name=$(basename "$f")
    if [ ! -f "$fixtures/$name" ]; then
        _t_result 1 "$name: recorded in tests/fixtures/renders"
        continue
    fi
    if cmp -s "$fixtures/$name" "$f"; then
        _t_result 0 "$name: byte-identical to the recorded render"
    else
        _t_result 1 "$name: byte-identical to the recorded render"
        diff "$fixtures/$name" "$f" | head -20 | sed 's/^/#   /'
    fi
done
for f in "$fixtures"/*.txt; do
    [ -f "$tmp/$(basename "$f")" ] || _t_result 1 "$(basename "$f"): recorded but no longer rendered (a system was removed?)"
done
done_testing

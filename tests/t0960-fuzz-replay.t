#!/bin/bash
# The fuzz corpora replayed: every file of tests/fuzz/corpus/NAME through its
# harness, built without libFuzzer as tests/fuzz/replay-NAME (under ASan and
# UBSan in a --enable-sanitizers build).  One test per harness, with the
# number of files; a broken promise, a crash or a sanitizer report fails it
# and names the file (tests/fuzz/README.md).
. "${srcdir:-.}/tests/lib.sh"
corpus="$srcdir/tests/fuzz/corpus"

[ -d "$corpus" ] || skip_all "no corpora in $corpus"
# every harness has a corpus (a directory lost, as *.log files once were to
# .gitignore, fails here), and every corpus a harness
for replay in "$top_builddir"/tests/fuzz/replay-*; do
    name=${replay##*/replay-}
    [ -x "$replay" ] && [ ! -d "$corpus/$name" ] && _t_result 1 "$name: a harness without a corpus in $corpus"
done
for dir in "$corpus"/*/; do
    name=$(basename "$dir")
    replay="$top_builddir/tests/fuzz/replay-$name"
    if [ ! -x "$replay" ]; then
        skip 1 "$name: replay-$name is not built here (configure left its library out)"
        continue
    fi
    files=$(find "$dir" -maxdepth 1 -type f ! -name '.*' | wc -l)
    out=$("$replay" "$dir" 2>&1); rc=$?
    if [ "$rc" -eq 0 ] && [ "$files" -gt 0 ] && [ "$(tail -n 1 <<<"$out")" = "replayed $files inputs" ]; then
        _t_result 0 "$name: $files files"
    else
        _t_result 1 "$name: $files files (exit $rc)"
        tail -n 40 <<<"$out" | sed 's/^/#   /'
    fi
done
done_testing

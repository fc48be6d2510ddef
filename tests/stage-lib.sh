# tests/stage-lib.sh: helpers of the staging tests (source it after lib.sh).
"$BENCHCTL" --version | grep -q xxhash || skip_all "benchctl built without libxxhash"
# check_tree SRC DST, check_tree --sums MANIFEST ROOT: the oracle (check-tree.py)
check_tree() { /usr/bin/python3 "${srcdir:?}/tests/check-tree.py" "$@"; }

# mk_files DIR N SIZE: N files of SIZE random bytes, DIR/f000.bin ...
mk_files() {
    /usr/bin/python3 -c '
import os, sys
d, n, size = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
os.makedirs(d, exist_ok=True)
for i in range(n):
    with open(os.path.join(d, "f%03d.bin" % i), "wb") as f:
        f.write(os.urandom(size))' "$@"
}
# staged DIR: the final-name files under DIR (not temporaries, not the manifest)
staged() { find "$1" -type f -name 'f*.bin' 2>/dev/null | sort; }
# temporaries DIR: how many staging temporary files DIR holds
temporaries() { find "$1" -name '.benchd-tmp.*' | wc -l; }
# jfield KEY...: fields of the JSON object on stdin, space separated; KEY.KEY
# for a field of an object in it (progress.files_copied)
jfield() {
    /usr/bin/python3 -c '
import functools, json, sys
j = json.load(sys.stdin)
print(" ".join(str(functools.reduce(lambda o, k: o[k], key.split("."), j)) for key in sys.argv[1:]))' "$@"
}

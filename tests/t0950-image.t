#!/bin/bash
# Container images built and run for real (make check-image): this build's
# packages (make deb), benchctl image build from Debian's archive (the base
# root file system made once per package list, then taken from the cache),
# image info; then the system 4xlocal-ch runs allreduce and SSD through the
# local Slurm cluster with every rank in the SquashFS image through ch-run
# (the trainers are /usr/bin/benchd-*, which only the image has), and the
# report shows what it shows without a container; benchctl health's
# allreduce rounds run there too (each group's ranks through ch-run), and
# name the node that cannot start the image.  The launch script checks
# the image on every node before the first trial (a missing image: no trial
# starts, the reason names the node) and warns, in the job output and the
# report, when the image's benchd or Open MPI major version is not the
# host's.  Where podman is installed: the OCI archive loads and the system
# local-podman runs allreduce and SSD in a podman container.
. "${srcdir:-.}/tests/lib.sh"
. "${srcdir:-.}/tests/image-lib.sh"
[ -x "$top_builddir/benchd-ssd" ] || skip_all "benchd-ssd not built (needs MPI and the COCO data pipeline)"
image_tools_or_skip
command -v ch-run >/dev/null || skip_all "ch-run not installed (charliecloud-runtime)"
for p in benchd-allreduce benchd-ssd; do
    [ ! -e "/usr/bin/$p" ] || skip_all "/usr/bin/$p exists on the host: the test could not tell the image's from it"
done
cluster_test 17417
export OMP_WAIT_POLICY=passive
version=$("$BENCHCTL" --version | head -1 | awk '{ print $2 }')

check "make deb: this build's packages" image_debs
out=$(image_build -o "$tmp/img.sqfs" 2>&1); rc=$?
is "image build (charliecloud: SquashFS) exits 0" "$rc" 0
printf '%s\n' "$out" | sed 's/^/#   /'
check "  the image is a SquashFS file" bash -c "head -c 4 '$tmp/img.sqfs' | grep -q hsqs"
out=$(image_build -o "$tmp/img.sqfs" 2>&1); rc=$?
is "a second build over it is refused" "$rc" 1
like "  saying why" "$out" "exists \(--force replaces it\)"
out=$(image_build --force -o "$tmp/img.sqfs" 2>&1); rc=$?
is "--force builds it again" "$rc" 0
like "  from the cached base (same package list)" "$out" "base root file system from the cache"
unlike "  without mmdebstrap" "$out" "mmdebstrap bookworm"

# an interrupted build removes what it made and writes nothing
"$BENCHCTL" image build --debs "$top_builddir/deb" --cache "$BENCHD_IMAGE_CACHE" -o "$tmp/int.sqfs" \
    > "$tmp/int.out" 2>&1 &
bpid=$!
for _ in $(seq 600); do
    compgen -G "$tmp/.image-root-*/usr/bin" >/dev/null && break
    sleep 0.1
done
kill -TERM "$bpid"; wait "$bpid"; rc=$?
dev_null_ok
is "SIGTERM mid-build: exit 143" "$rc" 143
like "  saying so" "$(cat "$tmp/int.out")" "interrupted \(Terminated\): what it had made is removed, '$tmp/int.sqfs' not written"
is "  nothing left beside the image" "$(cd "$tmp" && ls -A | grep -c '^\.image-root-\|^int\.sqfs')" 0
# what a killed build left (its process gone) goes with the next build on
# this host; a running build's stays; cache files unused for 30 days go
host=$(hostname)
mkdir -p "$tmp/.image-root-$host-999999-aaaaaa/usr" "$tmp/.image-root-$host-$$-bbbbbb"
touch "$tmp/img.sqfs.tmp-$host-999999" "$BENCHD_IMAGE_CACHE/base-t0950aaaaaaaaaaa.tar.tmp-$host-999999"
touch -d '40 days ago' "$BENCHD_IMAGE_CACHE/base-t0950bbbbbbbbbbb.tar" "$BENCHD_IMAGE_CACHE/build-99999999.log"
touch -d '10 days ago' "$BENCHD_IMAGE_CACHE/base-t0950ccccccccccc.tar"
out=$(image_build --force -o "$tmp/img.sqfs" 2>&1); rc=$?
is "a build after a killed one exits 0" "$rc" 0
like "  removing its root" "$out" "removing what an interrupted build left: $tmp/.image-root-$host-999999-aaaaaa"
check "  gone" test ! -e "$tmp/.image-root-$host-999999-aaaaaa"
check "  and its image" test ! -e "$tmp/img.sqfs.tmp-$host-999999"
check "  and its base in the cache" test ! -e "$BENCHD_IMAGE_CACHE/base-t0950aaaaaaaaaaa.tar.tmp-$host-999999"
check "  a live build's root stays" test -d "$tmp/.image-root-$host-$$-bbbbbb"
like "  a base unused for 40 days is pruned" "$out" "removed from the cache, unused for 30 days: .*/base-t0950bbbbbbbbbbb.tar"
check "  gone, with its old log" test ! -e "$BENCHD_IMAGE_CACHE/base-t0950bbbbbbbbbbb.tar" -a ! -e "$BENCHD_IMAGE_CACHE/build-99999999.log"
check "  one used 10 days ago stays" test -e "$BENCHD_IMAGE_CACHE/base-t0950ccccccccccc.tar"
rm -rf "$BENCHD_IMAGE_CACHE/base-t0950ccccccccccc.tar" "$tmp/.image-root-$host-$$-bbbbbb"

info=$("$BENCHCTL" image info "$tmp/img.sqfs"); rc=$?
is "image info exits 0" "$rc" 0
printf '%s\n' "$info" | sed 's/^/#   /'
like "  benchd's version is this build's" "$info" "^benchd +$version$"
like "  Open MPI's" "$info" "^mpi +Open MPI 4\.[0-9.]+ "
like "  when and by what it was built" "$info" "^built +20[0-9-]+T[0-9:]+Z by benchctl $version"
is "  --json: the record holds the packages and the list's checksum" "$("$BENCHCTL" image info --json "$tmp/img.sqfs" |
    python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["benchd_version"], "benchd-trainers" in j["packages"], "openmpi-bin" in j["package_list"],
      len(j["package_list_checksum"]))')" "$version True True 64"
out=$("$BENCHCTL" image info "$srcdir/README.md" 2>&1); rc=$?
is "image info of something else fails" "$rc" 1
like "  naming it" "$out" "README.md: neither a SquashFS image"
check "ch-run: benchctl runs in the image" bash -c "ch-run '$tmp/img.sqfs' -- benchctl --version | grep -q '^benchctl $version'"
check "the programs are in /opt/benchd/bin too (container.bin_dir's default)" \
      bash -c "ch-run '$tmp/img.sqfs' -- /opt/benchd/bin/benchd-allreduce --version | grep -q '$version'"

# ---- 4xlocal-ch through Slurm ----
"$BENCHCTL" dataset synth --images 64 --val-images 16 --seed 4 -o "$tmp/data" >/dev/null
ch=(--system 4xlocal-ch --set "container.image=$tmp/img.sqfs" --data "$tmp/data" --logdir "$tmp/logs")
last_run() { "$BENCHCTL" runs --limit 1 --json | python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["run"])'; }
job_out() { find "$tmp/logs" -name "$1_slurm-*.out" | head -1; }

timeout 600 "$BENCHCTL" submit "${ch[@]}" --runs 1 --set allreduce.max_bytes=1048576 --set allreduce.iters=3 \
     allreduce --wait > "$tmp/ar.out" 2>&1; rc=$?
is "4xlocal-ch allreduce through Slurm exits 0" "$rc" 0
ar_id=$(last_run)
rep=$("$BENCHCTL" report "$ar_id")
printf '%s\n' "$rep" | sed 's/^/#   /'
like "  the report has the bus bandwidth" "$rep" "busbw|bus bandwidth"
joined() { sed -e ':a' -e '/\\$/{N;s/\\\n *//;ba}'; }   # continuation lines as one
script=$("$BENCHCTL" render --run "$ar_id" | joined)
like "  every rank through ch-run in the image" "$script" "mpirun .*ch-run .*img\.sqfs -- /usr/bin/benchd-allreduce"
jo=$(job_out "$ar_id")
like "  the job output says what the image holds" "$(cat "$jo")" "^benchd: image .*img\.sqfs \(charliecloud\): benchd $version, Open MPI 4\."
like "  and the trial log repeats it" "$(cat "$tmp/logs/${ar_id}_1.log")" "^benchd: image .*: benchd $version"
unlike "  no warning: image and host agree" "$(cat "$jo")" "benchd: warning:"

# benchctl health's allreduce rounds in the container: each node alone, then
# two rounds of pairs, every rank through ch-run
out=$(timeout 600 "$BENCHCTL" health --system 4xlocal-ch --set "container.image=$tmp/img.sqfs" \
      --set paths.logs="$tmp/logs" --set health.allreduce_bytes=65536 --set health.tolerance=0.9 --no-report --json \
      2>"$tmp/health.err"); rc=$?
check "health of 4xlocal-ch, the allreduce in the image: exit 0 (6 where a pair strayed: $rc)" [ "$rc" = 0 -o "$rc" = 6 ]
is "  each node's figure inside itself and with two others" "$(python3 -c '
import json, sys
j = json.load(sys.stdin)["allreduce"]
print(sorted(n["name"] for n in j["nodes"] if (n.get("inside_gbps") or 0) > 0), len([p for p in j["pairs"] if p["gbps"]]))' <<<"$out")" \
   "['n1', 'n2', 'n3', 'n4'] 4"
hid=$(python3 -c 'import json,sys; print(json.load(sys.stdin)["allreduce"]["run"])' <<<"$out")
like "  each group's ranks through ch-run in the image" "$("$BENCHCTL" render --run "$hid" | joined)" \
     'mpirun -np "\$GROUP_RANKS" -H "\$GROUP_HOSTS" .*ch-run .*img\.sqfs -- /usr/bin/benchd-allreduce'

timeout 900 "$BENCHCTL" submit "${ch[@]}" --runs 1 --set ssd.image_size=64 --set ssd.epochs=1 \
      --set 'ssd.eval_epochs=[1]' --set 'ssd.decay_epochs=[]' --set ssd.target_map=0 ssd --wait > "$tmp/ssd.out" 2>&1; rc=$?
is "4xlocal-ch SSD through Slurm exits 0" "$rc" 0
ssd_id=$(last_run)
"$BENCHCTL" report "$ssd_id" --json > "$tmp/ssd.json"
"$BENCHCTL" report "$ssd_id" | sed 's/^/#   /'
is "  the report: a completed trial with its time to train and mAP, as without a container" "$(python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))[0]
t = r["trials"][0]
print(r["state"], t["status"], (t["time_to_train_min"] or 0) > 0, t["accuracy"] is not None)' \
    "$tmp/ssd.json")" "completed success True True"

# ---- the image check before the first trial ----
timeout 300 "$BENCHCTL" submit --system 4xlocal-ch --set "container.image=$tmp/none.sqfs" --data "$tmp/data" \
    --logdir "$tmp/logs" --runs 2 allreduce --wait > "$tmp/bad.out" 2>&1; rc=$?
is "a missing image: the run fails (exit 5)" "$rc" 5
bad_id=$(last_run)
st=$("$BENCHCTL" status "$bad_id" 2>&1)
printf '%s\n' "$st" | sed 's/^/#   /'
like "  the reason names the node and why" "$st" "image check failed on n[1-4]: .*(none\.sqfs|No such file)"
check "  no trial started: no trial log" bash -c "! ls '$tmp/logs/${bad_id}'_*.log 2>/dev/null | grep -q ."

out=$(timeout 300 "$BENCHCTL" health --system 4xlocal-ch --set "container.image=$tmp/none.sqfs" \
      --set paths.logs="$tmp/logs" --set health.allreduce_bytes=65536 --no-report 2>"$tmp/health-none.err"); rc=$?
is "health with the image missing: exit 7 (failed)" "$rc" 7
like "  the node the pre-flight stopped on is failed, with why" "$out" \
     "^  failed +sw\.image +the run's image check: .*(none\.sqfs|No such file)"
like "  the allreduce checks said not run" "$out" "^allreduce checks: not run"

# ---- an image that disagrees with the host ----
check "a directory image" image_build --format dir -o "$tmp/imgdir"
mv "$tmp/imgdir/usr/bin/benchd-allreduce" "$tmp/imgdir/usr/bin/benchd-allreduce.real"
cat > "$tmp/imgdir/usr/bin/benchd-allreduce" <<'EOF'
#!/bin/sh
# an older build's trainer, as far as its version says
[ "$1" = --version ] && { echo "benchd-allreduce 0.0.9"; exit 0; }
exec /usr/bin/benchd-allreduce.real "$@"
EOF
rm -f "$tmp/imgdir/usr/bin/mpirun"
printf '#!/bin/sh\necho "mpirun (Open MPI) 5.0.3"\n' > "$tmp/imgdir/usr/bin/mpirun"
chmod 755 "$tmp/imgdir/usr/bin/benchd-allreduce" "$tmp/imgdir/usr/bin/mpirun"
timeout 600 "$BENCHCTL" submit --system 4xlocal-ch --set "container.image=$tmp/imgdir" --data "$tmp/data" \
    --logdir "$tmp/logs" --runs 1 --set allreduce.max_bytes=65536 --set allreduce.iters=2 allreduce --wait \
    > "$tmp/old.out" 2>&1; rc=$?
is "an image of another version still runs" "$rc" 0
old_id=$(last_run)
rep=$("$BENCHCTL" report "$old_id")
printf '%s\n' "$rep" | head -4 | sed 's/^/#   /'
like "  the report warns of benchd's version, naming both" "$rep" \
    "warning: the image's benchd 0\.0\.9 is not the host's benchctl $version"
like "  and of Open MPI's major version, naming both" "$rep" \
    "warning: the image's Open MPI 5\.0\.3 is another major version than the host's 4\."
like "  so does the job output" "$(cat "$(job_out "$old_id")")" "^benchd: warning: the image's Open MPI 5\.0\.3"
is "  --json lists them" "$("$BENCHCTL" report "$old_id" --json | python3 -c '
import json, sys; print(len(json.load(sys.stdin)[0]["warnings"]))')" 2

# ---- podman on local ----
if ! command -v podman >/dev/null; then
    skip 8 "podman: not installed"
else
    ref="localhost/benchd/trainers-test:$$"
    podman rmi -f "$ref" >/dev/null 2>&1
    out=$(image_build --runtime podman --tag "$ref" -o "$tmp/img.oci.tar" 2>&1); rc=$?
    is "image build --runtime podman: an OCI archive" "$rc" 0
    python3 - "$tmp/img.oci.tar" <<'PY'
import sys, tarfile
names = tarfile.open(sys.argv[1]).getnames()
assert "index.json" in names and "manifest.json" in names and "oci-layout" in names, names
PY
    is "  with index.json, manifest.json and oci-layout" "$?" 0
    like "  image info reads the archive" "$("$BENCHCTL" image info "$tmp/img.oci.tar")" "^benchd +$version$"
    check "  podman loads it" bash -c "podman load -q -i '$tmp/img.oci.tar' >/dev/null && podman image exists '$ref'"
    like "  image info reads the loaded image" "$("$BENCHCTL" image info "$ref")" "^image +$ref \(podman\)"
    # a machine where podman cannot start any container (a sandbox that
    # forbids the rlimits, or the cgroup layout crun needs and no runc)
    # cannot run the system: said, not failed
    if ! podman_ready "$ref"; then
        skip 3 "podman cannot start a container here: $podman_why"
        podman rmi -f "$ref" >/dev/null 2>&1
        dev_null_ok
        done_testing
        exit $?
    fi
    [ -z "$podman_note" ] || echo "# $podman_note"
    pm=(--system local-podman --set "container.image=$ref" --data "$tmp/data" --logdir "$tmp/logs" --runs 1)
    timeout 600 "$BENCHCTL" submit "${pm[@]}" --set allreduce.max_bytes=1048576 --set allreduce.iters=3 allreduce \
        --wait > "$tmp/pm.out" 2>&1; rc=$?
    is "local-podman allreduce exits 0" "$rc" 0
    pm_id=$(last_run)
    like "  mpirun ran in the container (podman exec)" "$("$BENCHCTL" render --run "$pm_id" | joined)" \
        "podman exec \"\\\$CONTAINER\" mpirun"
    timeout 900 "$BENCHCTL" submit "${pm[@]}" --set ssd.image_size=64 --set ssd.epochs=1 --set 'ssd.eval_epochs=[1]' \
        --set 'ssd.decay_epochs=[]' --set ssd.target_map=0 ssd --wait > "$tmp/pm.out" 2>&1; rc=$?
    is "local-podman SSD exits 0" "$rc" 0
    podman rmi -f "$ref" >/dev/null 2>&1
fi
dev_null_ok
done_testing

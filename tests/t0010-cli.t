#!/bin/bash
# benchctl's command line: help, version, exit codes, the systems table.
. "${srcdir:-.}/tests/lib.sh"

out=$("$BENCHCTL" --help); rc=$?
is "--help exits 0" "$rc" 0
for c in systems show render bind; do like "--help lists $c" "$out" "^  $c "; done
out=$("$BENCHCTL" --version); rc=$?
is "--version exits 0" "$rc" 0
like "--version names the version" "$out" "^benchctl [0-9]+\.[0-9]+\.[0-9]+"
for cmd in systems show render bind; do
    out=$("$BENCHCTL" "$cmd" --help); rc=$?
    is "$cmd --help exits 0" "$rc" 0
    like "$cmd --help prints its usage" "$out" "^usage: benchctl $cmd"
    out=$("$BENCHCTL" help "$cmd"); rc=$?
    is "help $cmd is the same" "$rc" 0
done
"$BENCHCTL" >/dev/null 2>&1; is "no command: usage error" "$?" 2
err=$("$BENCHCTL" frobnicate 2>&1); rc=$?
is "unknown command exits 2" "$rc" 2
like "unknown command lists the commands" "$err" "unknown command 'frobnicate'; commands: systems"
err=$("$BENCHCTL" render --system local --bogus ssd 2>&1); rc=$?
is "unknown option exits 2" "$rc" 2
like "unknown option named in one line" "$err" "^benchctl render: unknown option '--bogus'"
is "  ... in one line" "$(printf '%s\n' "$err" | wc -l)" 1
# after an operand too: getopt moves operands behind the options it reads
for cmd in "render --system p3dn maskrcnn --bogus" "show p3dn --bogus" \
           "sweep --system p3dn maskrcnn --set ranks=1 --bogus" "submit --system local ssd --dry-run --bogus"; do
    err=$("$BENCHCTL" $cmd 2>&1); rc=$?
    like "$cmd: exit 2 naming --bogus, not the operand" "$rc:$err" "^2:benchctl [a-z]+: unknown option '--bogus'"
done
err=$("$BENCHCTL" render --system p3dn maskrcnn --runs 2>&1)
like "an option without its argument after an operand: named" "$err" "option '--runs' needs an argument"
err=$("$BENCHCTL" render --system 2>&1); rc=$?
is "missing option argument exits 2" "$rc" 2
err=$("$BENCHCTL" render ssd 2>&1); rc=$?
is "render without --system exits 2" "$rc" 2
like "  and says what is missing" "$err" "missing --system"
err=$("$BENCHCTL" render --system local ssd --runs 0 2>&1); rc=$?
is "--runs 0 is a usage error" "$rc" 2
err=$("$BENCHCTL" bind --system p3dn --local-rank x 2>&1); rc=$?
is "non-numeric rank is a usage error" "$rc" 2

out=$("$BENCHCTL" systems); rc=$?
is "systems exits 0" "$rc" 0
is "systems lists twelve systems" "$(printf '%s\n' "$out" | tail -n +2 | wc -l)" 12
for s in DSS8440 C4140 2xC4140 4xC4140 p3dn 24xp3dn p3.16xlarge local 4xlocal 24xlocal; do
    like "systems lists $s" "$out" "^$s +"
done
like "4xC4140 row" "$out" "^4xC4140 +4x4 +V100-SXM2-32GB +slurm +singularity"
is "the columns stay aligned, the longest name (local-podman) included" \
   "$(awk 'NR == 1 { c = index($0, "NODESxGPU") } { print substr($0, c - 1, 1) != " " || substr($0, c, 1) == " " }' <<<"$out" | sort -u)" 0
json=$("$BENCHCTL" systems --json)
is "systems --json is valid JSON with 12 entries" \
   "$(printf '%s' "$json" | /usr/bin/python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')" 12
# the cloud systems carry their on-demand price; the others leave it unset
is "cost per node hour: p3dn, 24xp3dn (its), p3.16xlarge, C4140 (unset)" "$(for s in p3dn 24xp3dn p3.16xlarge C4140; do
    "$BENCHCTL" show "$s" --json | /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin).get("cost_per_node_hour", 0))'
done | paste -sd' ')" "31.212 31.212 24.48 0"

json=$("$BENCHCTL" show 4xC4140 --json); rc=$?
is "show --json exits 0" "$rc" 0
vals=$(printf '%s' "$json" | /usr/bin/python3 -c '
import json, sys
j = json.load(sys.stdin)
print(j["nodes"], j["gpus_per_node"], j["ssd"]["batch_size"], j["gpu_model"], j["ssd"]["lr"])')
is "show 4xC4140: 4 nodes, 4 GPUs, batch 56 over C4140's 128, model and lr" "$vals" "4 4 56 V100-SXM2-32GB 0.0032"
out=$("$BENCHCTL" show C4140)
like "show prints dotted keys" "$out" "^ssd.batch_size = 128$"
out=$("$BENCHCTL" show 4xC4140 --set ssd.batch_size=64 --set slurm.partition=gpu)
like "show applies --set" "$out" "^ssd.batch_size = 64$"
like "show applies a string --set" "$out" '^slurm.partition = "gpu"$'

# the user's directory comes first and may refine a bundled system
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/C4140.json" <<'JSON'
// my site: a partition and an account
{ "extends": "C4140", "slurm": { "partition": "gpu", "account": "mlperf" } }
JSON
out=$("$BENCHCTL" --systems-dir "$tmp" show C4140)
like "--systems-dir file refines the bundled C4140" "$out" '^slurm.account = "mlperf"$'
like "  keeping the bundled values" "$out" "^ssd.batch_size = 128$"
out=$(BENCHD_SYSTEMS="$tmp:$srcdir/systems" "$BENCHCTL" show 4xC4140)
like "BENCHD_SYSTEMS is searched too (4xC4140 inherits the user's C4140)" "$out" '^slurm.partition = "gpu"$'

# --version: the trainers are the programs this build made
want="trainers:"
for w in ssd maskrcnn allreduce; do [ -x "$top_builddir/benchd-$w" ] && want="$want $w"; done
# Faster R-CNN is benchd-maskrcnn without its mask branch
[ -x "$top_builddir/benchd-maskrcnn" ] && want="$want fasterrcnn"
[ -x "$top_builddir/benchd-tv-maskrcnn" ] && want="$want torchvision-maskrcnn"
like "--version lists the trainers built" "$("$BENCHCTL" --version)" "^$want\$"

# no Slurm configuration at all: an error saying so (libslurm would end the
# process with its own fatal message)
if "$BENCHCTL" --version | grep -q 'features:.* libslurm'; then
    err=$(SLURM_CONF="$tmp/no-slurm.conf" BENCHD_HOME="$tmp/home" "$BENCHCTL" submit --system 4xlocal allreduce \
          --dry-run --set paths.bin="$top_builddir" 2>&1); rc=$?
    is "a Slurm system without a Slurm configuration: exit 4 (no scheduler to reach)" "$rc" 4
    is "  one line naming it" "$err" "benchctl: no Slurm configuration: SLURM_CONF='$tmp/no-slurm.conf': No such file or directory"
else
    skip 2 "built without libslurm"
fi

# a full stdout is a failure, not a truncated output
if [ -w /dev/full ]; then
    "$BENCHCTL" systems > /dev/full 2>/dev/null
    is "writing to a full device fails" "$?" 1
fi
done_testing

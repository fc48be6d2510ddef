#!/bin/bash
# Every benchctl command that README.md's code blocks and the man pages'
# EXAMPLE(S) sections give, read from the documents as the test runs
# (tests/doc-commands.py), run as written in a sandbox: HOME and BENCHD_HOME
# under $tmp; what the examples name mapped to small real things made first
# (their datasets, /shared and /scratch, a detections file, recorded runs, a
# sweep and two suites, nodes n1..n4 with a benchd each); a submission as a
# dry run, on the local Slurm test cluster where the system is a Slurm one.
# Each must end with 0, or a status the sandbox accounts for, and that
# status must be one the EXIT STATUS of benchctl(1) documents for the
# command.  sbatch, in an example, runs where the cluster is up.
. "${srcdir:-.}/tests/lib.sh"
command -v mpirun >/dev/null || skip_all "mpirun not installed (openmpi-bin): the examples' runs"
"$BENCHCTL" --version | grep -q '^features:.* coco-data' ||
    skip_all "built without the COCO data pipeline: the examples' datasets"
[ -x "$top_builddir/benchd-allreduce" ] || skip_all "benchd-allreduce not built (no MPI)"
DOC="$srcdir/tests/doc-commands.py"

cluster_why=$(cluster_missing)
if [ -z "$cluster_why" ]; then
    cluster_test 17517
    end=_cluster_cleanup
else
    own_runs
    end=_own_runs_end
    unset SLURM_CONF
fi
pids=()
trap 'for p in "${pids[@]}"; do stop_pid "$p"; done; $end' EXIT

# ---- the sandbox ------------------------------------------------------------
export HOME="$tmp/user"
export BENCHD_HOME="$HOME/.local/share/benchd"
export BENCHD_SYSTEMS="$HOME/.config/benchd/systems:$srcdir/systems"
unset BENCHD_WORKLOADS BENCHD_TOKEN
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
export OMP_WAIT_POLICY=passive
root="$tmp/root"        # the examples' /shared and /scratch
work="$tmp/work"        # the current directory
mkdir -p "$HOME/.config/benchd/systems" "$root/shared" "$root/scratch" "$work"

# datasets: where the local system looks, ~/data/coco, /shared/coco
data=$("$BENCHCTL" show local --json | /usr/bin/python3 -c 'import json, os, sys
print(os.path.expanduser(json.load(sys.stdin)["paths"]["data"]))')
check "sandbox: a small dataset where the local system looks ($data)" \
      "$BENCHCTL" dataset synth --images 16 --val-images 4 --size 64 --quiet -o "$data"
mkdir -p "$HOME/data"
cp -r "$data" "$HOME/data/coco" && cp -r "$data" "$root/shared/coco"
# detections of its validation images (their boxes)
/usr/bin/python3 - "$data/annotations/instances_val2017.json" "$tmp/detections.json" <<'PY'
import json, sys
gt = json.load(open(sys.argv[1]))
json.dump([{"image_id": a["image_id"], "category_id": a["category_id"], "bbox": a["bbox"], "score": 0.9}
           for a in gt["annotations"] if not a["iscrowd"]], open(sys.argv[2], "w"))
PY

# state dicts where README.md and benchctl-weights(1) name them (small ones:
# what benchctl weights reads, not what it finds in them)
weights_why=
if /usr/bin/python3 -c 'import torch' 2>/dev/null; then
    /usr/bin/python3 -c 'import sys, torch
sd = torch.nn.Conv2d(3, 4, 3).state_dict()
torch.save(sd, sys.argv[1] + "/resnet34-b627a593.pth")
torch.save({"state_dict": {"module." + k: v for k, v in sd.items()}}, sys.argv[1] + "/checkpoint.pth")' "$work"
else
    weights_why="no torch in /usr/bin/python3 (python3-torch) to save the examples' state dicts"
fi

# COCO 2017's archives (README: dataset fetch): small ones of the sandbox's
# dataset in the real layout, served on loopback, named by the site's own
# table of that name (~/.config/benchd/fetch/coco2017.json)
mkdir -p "$tmp/fetch-srv" "$HOME/.config/benchd/fetch"
(cd "$data" && zip -q -r "$tmp/fetch-srv/train2017.zip" train2017 && zip -q -r "$tmp/fetch-srv/val2017.zip" val2017 &&
    zip -q -r "$tmp/fetch-srv/annotations_trainval2017.zip" annotations)
/usr/bin/python3 "$srcdir/tests/range-server.py" "$tmp/fetch-srv" --port-file "$tmp/fetch-port" &
pids+=("$!")
wait_until 20 test -s "$tmp/fetch-port"
/usr/bin/python3 - "$tmp/fetch-srv" "$(cat "$tmp/fetch-port")" "$HOME/.config/benchd/fetch/coco2017.json" <<'PY'
import hashlib, json, os, sys
d, port, out = sys.argv[1:]
files = [{"name": n, "split": s, "url": "http://127.0.0.1:%s/%s" % (port, n), "bytes": os.path.getsize(os.path.join(d, n)),
          "sha1": hashlib.sha1(open(os.path.join(d, n), "rb").read()).hexdigest(), "source": "the sandbox"}
         for n, s in (("annotations_trainval2017.zip", "annotations"), ("val2017.zip", "val"), ("train2017.zip", "train"))]
json.dump({"name": "coco2017", "kind": "dataset", "files": files}, open(out, "w"))
PY
# torchvision's ResNet-34 and ResNet-50 (benchctl-weights(1): weights fetch),
# random weights under torchvision's kind of name, the same way
if [ -z "$weights_why" ]; then
    /usr/bin/python3 - "$tmp/fetch-srv" "$(cat "$tmp/fetch-port")" "$HOME/.config/benchd/fetch" <<'PY'
import hashlib, json, os, sys, torch, torchvision
d, port, out = sys.argv[1:]
for arch in ("resnet34", "resnet50"):
    tmp = os.path.join(d, arch + ".tmp")
    torch.save(getattr(torchvision.models, arch)().state_dict(), tmp)
    h = hashlib.sha256(open(tmp, "rb").read()).hexdigest()
    name = "%s-%s.pth" % (arch, h[:8])
    os.rename(tmp, os.path.join(d, name))
    json.dump({"name": arch, "kind": "weights", "output": arch + ".bdw",
               "files": [{"name": name, "url": "http://127.0.0.1:%s/%s" % (port, name), "sha256": h[:8],
                          "source": "the sandbox"}]}, open(os.path.join(out, arch + ".json"), "w"))
PY
fi

# recorded runs (allreduce, small): a sweep, two suites, then three runs, the
# last one last
fast=(--set allreduce.max_bytes=65536 --set allreduce.iters=2 --set allreduce.warmup=1)
out=$("$BENCHCTL" sweep --system local allreduce --set ranks=1,2 "${fast[@]}" 2>&1)
sweep=$(sed -n 's/^sweep \(sw-[^:]*\):.*/\1/p' <<<"$out" | head -1)
cat > "$tmp/base.json" <<'JSON'
{ "description": "the sandbox's suite",
  "benchmarks": { "allreduce": { "workload": "allreduce", "set": { "max_bytes": 65536, "iters": 2, "warmup": 1 },
                                 "targets": { "local": 0.1 } } } }
JSON
suites=()
for _ in 1 2; do
    out=$("$BENCHCTL" suite run "$tmp/base.json" --system local --repeat 2 2>&1)
    suites+=("$(sed -n 's/^suite \(su-[^:]*\):.*/\1/p' <<<"$out" | head -1)")
done
runs=()
for _ in 1 2 3; do
    out=$("$BENCHCTL" submit --system local allreduce --runs 1 "${fast[@]}" --wait 2>&1)
    runs+=("$(sed -n 's/^run \([^ ]*\) started.*/\1/p' <<<"$out")")
done
like "sandbox: a sweep, two suites and three runs recorded" "$sweep ${suites[*]} ${runs[*]}" \
     "^sw-[^ ]+ su-[^ ]+ su-[^ ]+ [0-9]{8}-[^ ]+ [0-9]{8}-[^ ]+ [0-9]{8}-[^ ]+$"

# nodes n1..n4: a benchd each on 127.0.0.2-5, each in a mount namespace of
# its own where /scratch is its own disk; where that cannot be, closed ports
# (and the status the page gives a node that does not answer)
printf '%s' "0123456789abcdef0123456789abcdef" > "$tmp/token"
chmod 600 "$tmp/token"
export BENCHD_TOKEN=0123456789abcdef0123456789abcdef
nodes_why=
if [ "$(id -u)" -ne 0 ] || ! unshare --mount --propagation private true 2>/dev/null; then
    nodes_why="no benchd on the nodes here (their own disks need root and mount namespaces)"
elif ! "$top_builddir/benchd" --help 2>/dev/null | grep -q -- '--listen'; then
    nodes_why="no benchd on the nodes here (benchd built without libmicrohttpd)"
fi
node=()
if [ -z "$nodes_why" ]; then
    for ((bd_port = 18410; bd_port < 18450; bd_port++)); do
        busy=
        for k in 2 3 4 5; do (exec 3<>"/dev/tcp/127.0.0.$k/$bd_port") 2>/dev/null && busy=1; done
        [ -z "$busy" ] && break
    done
    for k in 1 2 3 4; do
        node[k]="127.0.0.$((k + 1)):$bd_port"
        mkdir -p "$tmp/disk/n$k"
        cat > "$tmp/benchd-n$k.conf" <<CONF
listen = ${node[k]}
token_file = $tmp/token
state_dir = $tmp/state/n$k
stage_allow = $root/scratch
log_level = notice
CONF
        unshare --mount --propagation private bash -c \
            "mount --bind '$tmp/disk/n$k' '$root/scratch' && exec '$top_builddir/benchd' -f -c '$tmp/benchd-n$k.conf'" \
            2>>"$tmp/benchd-n$k.log" &
        pids+=("$!")
    done
    up=0
    for k in 1 2 3 4; do wait_until 20 curl -sf "http://${node[k]}/v1/health" && up=$((up + 1)); done
    is "sandbox: a benchd answers for each of n1..n4 (127.0.0.2-5:$bd_port)" "$up" 4
else
    for k in 1 2 3 4; do node[k]="127.0.0.1:$(free_port $((18440 + 10 * k)))"; done
    skip 1 "$nodes_why"
fi
# the site's 4xC4140 names its nodes (README: a file of the same name
# extends the bundled one)
printf '{ "extends": "4xC4140", "benchd": { "hosts": ["%s", "%s", "%s", "%s"] } }\n' \
       "${node[1]}" "${node[2]}" "${node[3]}" "${node[4]}" > "$HOME/.config/benchd/systems/4xC4140.json"

# ---- what the page documents ------------------------------------------------
# documented_for STATUS WORDS...: whether benchctl(1)'s EXIT STATUS gives
# STATUS to the command WORDS (an entry about no command in particular
# gives it to all; one about 'submit --wait' to a submit with --wait)
/usr/bin/python3 "$DOC" exit-status "$srcdir/man/benchctl.1" > "$tmp/exit-status"
documented_for() {
    local status=$1 st about spec s w opt found
    shift
    while IFS=$'\t' read -r st about _; do
        [ "$st" = "$status" ] || continue
        [ "$about" = "*" ] && return 0
        IFS=';' read -ra spec <<<"$about"
        for s in "${spec[@]}"; do
            read -ra w <<<"$s"
            [ "${w[0]}" = "$1" ] || continue
            found=1
            for opt in "${w[@]:1}"; do [[ " $* " == *" $opt "* ]] || found=; done
            [ -n "$found" ] && return 0
        done
    done < "$tmp/exit-status"
    return 1
}
statuses_for() {
    local st
    while read -r st _; do
        [[ $st =~ ^[0-9]+$ ]] && documented_for "$st" "$@" && printf '%s ' "$st"
    done < "$tmp/exit-status"
}
# benchd's own workloads whose trainer this build does not make
not_built=$("$BENCHCTL" workloads --json | /usr/bin/python3 -c 'import json, sys
print(" ".join(w["name"] for w in json.load(sys.stdin) if w["own"] and w["runs_here"] != "yes"))')
# launcher_of SYSTEM: slurm, mpirun or local (nothing for an unknown system)
launcher_of() {
    "$BENCHCTL" show "$1" --json 2>/dev/null | /usr/bin/python3 -c 'import json, sys
print(json.load(sys.stdin)["launcher"])' 2>/dev/null
}
# left out, and why
declare -A left_out=(
    ["image build"]="it builds an image from Debian's archive as root, minutes (make check-image runs it)"
)

# ---- the documents' commands ------------------------------------------------
/usr/bin/python3 "$DOC" commands "$srcdir" > "$tmp/commands" 2>"$tmp/commands.err"
check "the commands are read from the documents" test ! -s "$tmp/commands.err"
like "README.md gives benchctl commands" "$(cut -f1,2 "$tmp/commands")" $'^README.md:[0-9]+\tbenchctl$'
like "man/benchctl.1's EXAMPLES give benchctl commands" "$(cut -f1,2 "$tmp/commands")" $'^man/benchctl.1:[0-9]+\tbenchctl$'

while IFS=$'\t' read -r where kind text wordlist <&3; do
    IFS=$'\x1f' read -ra words <<<"$wordlist"
    if [ "$kind" != benchctl ]; then
        if [ "${words[0]}" = sbatch ] && [ -z "$cluster_why" ]; then
            (cd "$work" && timeout 60 "${words[@]}" </dev/null >"$tmp/out" 2>&1); rc=$?
            is "$where: $text: exit $rc (sbatch accepts what benchctl rendered)" "$rc" 0
            [ "$rc" -eq 0 ] || sed 's/^/#   /' "$tmp/out" | tail -5
        elif [ "${words[0]}" = sbatch ]; then
            skip 1 "$where: $text: needs the local Slurm test cluster ($cluster_why)"
        else
            skip 1 "$where: $text: not a benchctl command"
        fi
        continue
    fi
    sub=${words[1]:-}
    case $sub in dataset|suite|image) sub="$sub ${words[2]:-}" ;; esac
    if [ -n "${left_out[$sub]:-}" ]; then
        skip 1 "$where: $text: left out: ${left_out[$sub]}"
        continue
    fi
    if [ "$sub" = weights ] && [ -n "$weights_why" ]; then
        skip 1 "$where: $text: $weights_why"
        continue
    fi
    # the words as the sandbox has them
    args=("$BENCHCTL")
    run_i=0 json_i=0 system='' out_dir='' prev=''
    for w in "${words[@]:1}"; do
        # shellcheck disable=SC2088 # the document's tilde, not the shell's
        case $w in "~/"*) w="$HOME/${w#"~/"}" ;; esac
        case $w in
            /shared/*|/scratch/*) w="$root$w" ;;
            RUN|RUN[0-9]*|RUN_*) w=${runs[run_i++]:-} ;;
            SUITE_*|su-[0-9]*) w=${suites[0]} ;;
            sw-[0-9]*) w=$sweep ;;
            n[0-9]|n[0-9][0-9]) [ "$sub" = nodes ] && w=${node[${w#n}]:-} ;;
            *.json)
                if [ "$sub" = coco-eval ]; then
                    json_i=$((json_i + 1))
                    [ "$json_i" = 1 ] && w="$data/annotations/instances_val2017.json"
                    [ "$json_i" = 2 ] && w="$tmp/detections.json"
                elif [[ $w != /* && ! -e $work/$w && -e $srcdir/$w ]]; then
                    w="$srcdir/$w"
                fi ;;
        esac
        [ "$prev" = --system ] && system=$w
        [ "$prev" = -o ] && out_dir=$w
        args+=("$w")
        prev=$w
    done
    # a submission is a dry run; a Slurm system's needs the test cluster
    case $sub in
        submit|sweep|"suite run")
            [[ " ${args[*]} " == *" --dry-run "* ]] || args+=(--dry-run)
            if [ "$(launcher_of "$system")" = slurm ] && [ -n "$cluster_why" ]; then
                skip 1 "$where: $text: needs the local Slurm test cluster ($cluster_why)"
                continue
            fi ;;
        "dataset synth") [ -n "$out_dir" ] && rm -rf "$out_dir" ;;    # as on a machine without it
    esac
    # the status the sandbox accounts for
    want=0 why=''
    case $sub in
        nodes) [ -n "$nodes_why" ] && want=4 why=$nodes_why ;;
        health)
            # the sandbox's nodes are this machine (no GPUs, not the
            # system's NICs), and no benchd answers on localhost; this
            # machine read in-process is what the local system says
            if [[ " ${words[*]} " == *" --node-local "* ]] && [ "$system" = local ]; then
                want=0 why="this machine is the local system"
            else
                want=7 why="the sandbox's nodes are not the system's"
            fi ;;
        stage) [[ " ${words[*]} " == *" --local "* ]] || { [ -n "$nodes_why" ] && want=4 why=$nodes_why; } ;;
        submit)
            for w in "${words[@]}"; do
                [[ " $not_built " == *" $w "* ]] && want=3 why="this build does not make $w's trainer"
            done ;;
    esac
    (cd "$work" && timeout 60 "${args[@]}" </dev/null >"$tmp/out" 2>&1); rc=$?
    documented=$(statuses_for "${words[@]:1}")
    if [ "$rc" = "$want" ] && documented_for "$rc" "${words[@]:1}"; then
        _t_result 0 "$where: $text: exit $rc (documented${why:+; $why})"
    else
        _t_result 1 "$where: $text: exit $rc (wanted $want${why:+, $why}; documented for it: ${documented% })"
        tail -n 15 "$tmp/out" | sed 's/^/#   /'
        echo "#   ran: ${args[*]}"
    fi
done 3< "$tmp/commands"
done_testing

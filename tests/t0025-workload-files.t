#!/bin/bash
# Workload files: the bundled ones listed and shown; a workload of someone
# else's added by a file alone (rendered as its file says, its keys checked in
# system files and --set); a bundled one refined by a file of its name; the
# search path (--workloads-dir before or after the command, BENCHD_WORKLOADS,
# ~/.config/benchd/workloads); bad files: one line naming file:line, exit 3.
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export HOME="$tmp/home"
unset BENCHD_WORKLOADS XDG_CONFIG_HOME

out=$("$BENCHCTL" workloads); rc=$?
is "workloads: exit 0" "$rc" 0
like "  a header" "$out" "^WORKLOAD +TITLE +RESULT +PROGRAM +RUNS HERE$"
like "  ssd, its title and program" "$out" "^ssd +SSD \(ResNet-34\) +time-to-train +benchd-ssd "
like "  allreduce is scored by bandwidth" "$out" "^allreduce +allreduce bandwidth check +bus-bandwidth +benchd-allreduce "
is "  the bundled eleven, no abstract base" "$(tail -n +2 <<<"$out" | awk '{ print $1 }' | paste -sd' ')" \
   "ssd maskrcnn allreduce fasterrcnn torchvision-maskrcnn gluoncv-maskrcnn ngc-maskrcnn mxnet-ssd gluoncv-fasterrcnn mila-convnet mila-ssd"
like "  a throughput workload says so" "$out" "^mila-convnet +.* +throughput +python "
like "  GluonCV's trainer: python, on PATH or not" "$out" "^gluoncv-maskrcnn +Mask R-CNN \(GluonCV, MXNet \+ Horovod\) +time-to-train +python "
like "  the torchvision trainer is benchd's script" "$out" \
     "^torchvision-maskrcnn +Mask R-CNN \(torchvision, PyTorch\) +time-to-train +benchd-tv-maskrcnn "
json=$("$BENCHCTL" workloads --json)
check "workloads --json is JSON" python3 -c 'import json, sys; d = json.loads(sys.argv[1]); assert [w["name"] for w in d] == ["ssd", "maskrcnn", "allreduce", "fasterrcnn", "torchvision-maskrcnn", "gluoncv-maskrcnn", "ngc-maskrcnn", "mxnet-ssd", "gluoncv-fasterrcnn", "mila-convnet", "mila-ssd"]; assert [w["own"] for w in d] == [True] * 5 + [False] * 6' "$json"

out=$("$BENCHCTL" show --workload maskrcnn --json); rc=$?
is "show --workload maskrcnn --json: exit 0" "$rc" 0
check "  the file resolved: its own keys and the inherited ones, its command" python3 -c '
import json, sys
d = json.loads(sys.argv[1])
assert d["name"] == "maskrcnn" and d["file"] == "workloads/maskrcnn.json (bundled)"
assert d["keys"]["ims_per_batch"]["default"] == 16
assert d["keys"]["seed"]["arg"] is None and d["keys"]["backend"]["choices"] == ["cpu", "cuda"]
assert d["command"][0] == "{program}" and "abstract" not in d and "extends" not in d' "$out"
like "show --workload: key = value lines" "$("$BENCHCTL" show --workload ssd)" '^keys\.batch_size\.default = 32$'
out=$("$BENCHCTL" show --workload nosuch 2>&1); rc=$?
is "show --workload of an unknown name: exit 3" "$rc" 3
like "  naming the known ones" "$out" "unknown workload 'nosuch'; known workloads: ssd, maskrcnn, allreduce"
out=$("$BENCHCTL" show local --workload ssd 2>&1); rc=$?
is "show SYSTEM --workload: usage error" "$rc" 2

# a trainer of someone else's, added by a file alone
mkdir -p "$tmp/wl"
cat > "$tmp/wl/toy.json" <<'JSON'
// someone else's trainer: a script that reads the dataset and prints MLPerf lines
{
  "title": "toy trainer",
  "program": "/opt/toy/train.py",
  "result": { "kind": "time-to-train", "targets": ["target"] },
  "command": ["python3", "-u", "{program}", "--data-dir={data}", "{args}", "--seed", "{trial_seed}",
              { "if": "weights", "then": ["--weights", "{weights}"] }, "{extra}"],
  "keys": {
    "lr": { "type": "number", "default": 0.1, "min": 0, "help": "learning rate" },
    "batch": { "type": "int", "default": 8, "min": 1, "arg": "--batch-size" },
    "amp": { "type": "bool", "default": false },
    "target": { "type": "number", "default": 0.5, "min": 0, "max": 1, "arg": null },
    "steps": { "type": "int", "when": "amp" },
    "weights": { "type": "string", "path": "pretrained" },
    "extra": { "type": "string-list", "default": ["--x", "y z"] }
  }
}
JSON
launch() {   # the rendered script's launch line, continuation lines joined
    "$BENCHCTL" "$@" | sed -e ':a' -e '/\\$/N; s/\\\n *//; ta' | grep -E 'mpirun|srun'
}
out=$("$BENCHCTL" --workloads-dir "$tmp/wl" workloads)
like "a workload file in --workloads-dir is listed" "$out" '^toy +toy trainer +time-to-train +/opt/toy/train.py +not here$'
out=$(launch --workloads-dir "$tmp/wl" render --system local toy --run-id x)
like "  rendered as its command says: {args} in the section's order, an option's own name, a boolean as 0" "$out" \
     "python3 -u /opt/toy/train.py --data-dir=[^ ]*/coco-synth --lr 0.1 --batch-size 8 --amp 0 --seed \"\\\$seed\" --x 'y z'\$"
unlike "  a key with \"arg\": null is not passed" "$out" "--target"
out=$(launch render --workloads-dir "$tmp/wl" --system local toy --set toy.amp=true --set toy.steps=20 \
      --set toy.weights=w.bdw --set 'toy.extra=[]' --run-id x)
like "  --workloads-dir among the command's options; \"when\" holds, \"if\" words, a path key" "$out" \
     "--amp 1 --steps 20 --seed \"\\\$seed\" --weights /tmp/[^ ]*/home/.local/share/benchd/pretrained/w.bdw\$"
out=$("$BENCHCTL" render --workloads-dir "$tmp/wl" --system local toy --set toy.lr=-1 2>&1); rc=$?
is "  its keys are checked like the bundled ones': exit 3" "$rc" 3
like "  naming the key" "$out" "'toy.lr': expected a number >= 0, got -1"
out=$("$BENCHCTL" render --workloads-dir "$tmp/wl" --system local toy --set toy.lx=1 2>&1); rc=$?
like "  an unknown key suggests the closest" "$out" "unknown key 'toy.lx' \(did you mean 'toy.lr'\?\)"
mkdir -p "$tmp/sys"
printf '{ "extends": "local", "toy": { "lr": 0.5, "batch": 4 } }\n' > "$tmp/sys/mine.json"
out=$(launch --workloads-dir "$tmp/wl" --systems-dir "$tmp/sys" render --system mine toy --run-id x)
like "  a system file's section of it" "$out" "--lr 0.5 --batch-size 4 "
out=$("$BENCHCTL" --systems-dir "$tmp/sys" show mine 2>&1); rc=$?
is "  without the file, that section is an unknown key: exit 3" "$rc" 3
like "  naming it" "$out" "'toy': unknown key"
out=$(BENCHD_WORKLOADS="$tmp/nowhere:$tmp/wl" "$BENCHCTL" workloads)
like "BENCHD_WORKLOADS is searched" "$out" "^toy "
mkdir -p "$HOME/.config/benchd/workloads" && cp "$tmp/wl/toy.json" "$HOME/.config/benchd/workloads/"
like "the configuration directory's workloads/ is searched" "$("$BENCHCTL" workloads)" "^toy "
rm -r "$HOME/.config/benchd/workloads"

# a workload file's own learning-rate rule ("scaling"), applied by a sweep
# over batch_size: 2 ranks x 8 is its base batch 16 (nothing changes), 2 x 32
# is 4x: lr x sqrt(4), warmup and (to a target) steps / 4
cat > "$tmp/wl/scaled.json" <<'JSON'
{
  "title": "a trainer with its own rule", "program": "/opt/toy/train.py",
  "command": ["python3", "{program}", "{args}"],
  "scaling": {
    "lr": { "key": "lr", "rule": "sqrt", "base_batch": 16 },
    "warmup": { "key": "warmup", "rule": "inverse" },
    "schedule": ["steps"]
  },
  "keys": {
    "batch_size": { "type": "int", "default": 8, "min": 1, "help": "images per rank" },
    "lr": { "type": "number", "default": 0.1, "min": 0 },
    "warmup": { "type": "int", "default": 100, "min": 0 },
    "steps": { "type": "int", "default": 1000, "min": 1 }
  }
}
JSON
out=$("$BENCHCTL" --workloads-dir "$tmp/wl" sweep --system local scaled --set batch_size=8,32 --mode time-to-train \
      --dry-run 2>&1); rc=$?
is "a sweep of a workload with its own rule: exit 0" "$rc" 0
like "  the rule, in words" "$out" "learning rate: square-root scaling from global batch 16 at lr 0\.1"
is "  its base batch: nothing scaled" "$(grep '^cell 1' <<<"$out")" "cell 1: batch_size=8: --set scaled.batch_size=8"
like "  4x the batch: lr x2, warmup and steps /4" "$(grep '^cell 2' <<<"$out")" \
     "scaled.batch_size=32 --set scaled.lr=0\.2 --set scaled.warmup=25 --set scaled.steps=250\$"
out=$("$BENCHCTL" --workloads-dir "$tmp/wl" sweep --system local scaled --set batch_size=32 --dry-run 2>&1)
unlike "  a throughput sweep leaves the schedule" "$out" "scaled\.steps="
out=$("$BENCHCTL" --workloads-dir "$tmp/wl" sweep --system local toy --set batch=4 --dry-run 2>&1)
like "a workload file with no rule: none" "$out" "learning rate: none \(the workload file states no rule\)"

# a bundled workload refined by a file of its name
mkdir -p "$tmp/mine"
printf '{\n  "extends": "ssd",\n  "title": "SSD, batch 16 here",\n  "keys": { "batch_size": { "default": 16 } }\n}\n' \
    > "$tmp/mine/ssd.json"
out=$("$BENCHCTL" --workloads-dir "$tmp/mine" workloads)
like "a file extending the bundled workload of its name replaces it in place" "$(sed -n 2p <<<"$out")" "^ssd +SSD, batch 16 here "
out=$(launch --workloads-dir "$tmp/mine" render --system p3dn ssd)
like "  its default, and everything else the bundled one's" "$out" \
     "benchd-ssd --data [^ ]+ --batch-size 16 --lr 0.0025 --warmup-epochs 5 "

# bad files: one line naming the file and line, exit 3, before anything is
# rendered, when the file is used (the workload rendered is its own)
bad() {   # NAME WANT TEXT
    local name=$1 want=$2 out rc
    rm -rf "$tmp/bad" && mkdir -p "$tmp/bad"
    printf '%b' "$3" > "$tmp/bad/w.json"
    out=$("$BENCHCTL" --workloads-dir "$tmp/bad" render --system local w 2>&1 >/dev/null); rc=$?
    is "$name: exit 3" "$rc" 3
    like "  $want" "$out" "^benchctl: $tmp/bad/w.json:$want"
    is "  one line" "$(wc -l <<<"$out")" 1
}
bad "an unknown field" "2: 'comand': unknown field \(did you mean 'command'\?\)" \
    '{ "title": "x", "program": "p",\n  "comand": [] }\n'
bad "a placeholder that names nothing" "[0-9]+: 'command': '\{lrr\}': \{lrr\} is neither a key of the section" \
    '{ "title": "x", "program": "p",\n  "command": ["{program}", "{lrr}"],\n  "keys": { "lr": { "type": "number" } } }\n'
bad "a default of the wrong type" "3: 'keys.n.default': expected an integer, got 3.5" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "keys": {\n    "n": { "type": "int", "default": 3.5 } } }\n'
bad "a default out of range" "3: 'keys.n.default': expected an integer in \[1, 9\], got 10" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "keys": {\n    "n": { "type": "int", "min": 1, "max": 9, "default": 10 } } }\n'
bad "an unknown type" "2: 'keys.n.type': 'integer' is not one of: string, int," \
    '{ "title": "x", "program": "p", "command": ["{program}"], "keys": {\n  "n": { "type": "integer" } } }\n'
bad "malformed JSON" "2:[0-9]+: malformed JSON" '{ "title": "x",\n  "program" }\n'
bad "no command" "[0-9 :]*no 'command'" '{ "title": "x", "program": "p" }\n'
bad "a missing base" "1: 'extends': no workload 'nosuch' to extend" '{ "extends": "nosuch", "title": "x" }\n'
bad "a target that is no number key" "[0-9]*:? ?'targets': target 'n' is not a key of type number" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "result": { "targets": ["n"] },\n  "keys": { "n": { "type": "int" } } }\n'
bad "an unknown learning-rate rule" "3: 'scaling.lr.rule': 'cubic' is not one of: linear, sqrt, trainer, none" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "keys": { "lr": { "type": "number" } }, "scaling": {\n    "lr": { "key": "lr", "rule": "cubic" } } }\n'
bad "a warmup increment without an inverse warmup" "3: 'scaling.warmup.increment': goes with the warmup's rule 'inverse'" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "keys": { "f": { "type": "number" } }, "scaling": {\n    "warmup": { "rule": "none", "increment": { "key": "f" } } } }\n'
bad "an increment's condition on a key that is not there" "3: 'scaling.warmup.increment.when': 'method' is not a key of the section" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "keys": { "f": { "type": "number" }, "w": { "type": "int" } }, "scaling": {\n    "warmup": { "key": "w", "rule": "inverse", "increment": { "key": "f", "when": "method", "is": "x" } } } }\n'
bad "a rule on a key of the wrong type" "3: 'scaling.schedule': 'lr' is a key of type number, not int, int-list" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "keys": { "lr": { "type": "number" } },\n  "scaling": { "schedule": ["lr"] } }\n'
bad "{args} inside a word" "[0-9]+: 'command': '--x={args}': \{args\} is a word of its own" \
    '{ "title": "x", "program": "p",\n  "command": ["{program}", "--x={args}"] }\n'
bad "own, but not benchd's" "[0-9]+: 'program': 'train.py' is not one of benchd's programs" \
    '{ "title": "x",\n  "program": "train.py", "own": true, "command": ["{program}"] }\n'
bad "per-node without its launcher" "2: 'launch.shape': per-node needs \"launcher\"" \
    '{ "title": "x", "program": "python", "command": ["{program}"],\n  "launch": { "shape": "per-node" } }\n'
bad "a launcher for per-rank" "2: 'launch.launcher': for \"shape\": \"per-node\"" \
    '{ "title": "x", "program": "python", "command": ["{program}"],\n  "launch": { "shape": "per-rank", "launcher": "torchrun" } }\n'
bad "an unknown launcher" "2: 'launch.launcher': 'mpiexec' is not one of: torch.distributed.launch, torchrun" \
    '{ "title": "x", "program": "python", "command": ["{program}"],\n  "launch": { "shape": "per-node", "launcher": "mpiexec" } }\n'
bad "per-node, its command not starting with {program}" "[0-9]+: 'command': per-node: the command starts with \{program\}" \
    '{ "title": "x", "program": "python",\n  "command": ["train.py"], "launch": { "shape": "per-node", "launcher": "torchrun" } }\n'
bad "an override in 'arg'" "3: 'keys.lr': 'arg' is an option starting with '-' .*got 'SOLVER.BASE_LR' \(a KEY VALUE override" \
    '{ "title": "x", "program": "p", "command": ["{program}", "{args}"], "keys": {\n\n  "lr": { "type": "number", "arg": "SOLVER.BASE_LR" } } }\n'
bad "an override that is no key" "3: 'keys.lr': 'override' is a configuration key of the program" \
    '{ "title": "x", "program": "p", "command": ["{program}", "{args}"], "keys": {\n\n  "lr": { "type": "number", "override": "--lr" } } }\n'
bad "an override with an arg" "3: 'keys.lr': 'override' \(KEY VALUE\) goes with neither 'arg' nor 'flag'" \
    '{ "title": "x", "program": "p", "command": ["{program}", "{args}"], "keys": {\n\n  "lr": { "type": "number", "override": "LR", "arg": "--lr" } } }\n'
bad "an image of benchd's own program" "2: 'image.docker': benchd's own programs run in the system's image" \
    '{ "extends": "ssd", "title": "x",\n  "image": { "docker": "nvcr.io/nvidia/pytorch:20.06-py3" } }\n'
bad "an image for an unknown runtime" "2: 'image.shifter': unknown field" \
    '{ "title": "x", "program": "p", "command": ["{program}"],\n  "image": { "shifter": "x" } }\n'
out=$(printf '{ "extends": "w", "title": "x", "program": "p", "command": ["x"] }\n' > "$tmp/bad/w.json";
      "$BENCHCTL" --workloads-dir "$tmp/bad" render --system local w 2>&1); rc=$?
is "a file extending its own name, with none further down the path: exit 3" "$rc" 3
like "  says so" "$out" "w.json:1: 'extends': no workload 'w' to extend"
out=$(printf '{ "extends": "v", "title": "x" }\n' > "$tmp/bad/w.json"; printf '{ "extends": "w" }\n' > "$tmp/bad/v.json";
      "$BENCHCTL" --workloads-dir "$tmp/bad" render --system local w 2>&1); rc=$?
is "two files extending each other: exit 3" "$rc" 3
like "  the cycle is named, from the file used" "$out" "'extends' cycle: .*w.json -> .*v.json -> .*w.json"
rm -f "$tmp/bad/v.json"
rm -rf "$tmp/bad" && mkdir -p "$tmp/bad" && printf '{ "title": "x" ' > "$tmp/bad/w.json"
out=$("$BENCHCTL" --workloads-dir "$tmp/bad" workloads 2>&1); rc=$?
is "workloads with a bad file: exit 3" "$rc" 3
like "  lists the others" "$out" "^ssd "
out=$("$BENCHCTL" --workloads-dir "$tmp/bad" status 2>&1); rc=$?
unlike "  a command that reads no workload is not stopped by it" "$out" "w.json"
out=$("$BENCHCTL" --workloads-dir "$tmp/bad" render --system local ssd 2>&1 >/dev/null); rc=$?
is "  nor one that renders another workload: exit 0" "$rc" 0
is "  and says nothing of it" "$out" ""
for cmd in "show --workload w" "submit --system local w --dry-run"; do
    out=$("$BENCHCTL" --workloads-dir "$tmp/bad" $cmd 2>&1); rc=$?
    is "$cmd: exit 3" "$rc" 3
    like "  naming the file" "$out" "^benchctl: $tmp/bad/w.json:1:"
done
printf '{ "extends": "local", "w": {} }\n' > "$tmp/sys/usesw.json"
out=$("$BENCHCTL" --workloads-dir "$tmp/bad" --systems-dir "$tmp/sys" render --system usesw ssd 2>&1); rc=$?
is "a system file with a section of it: exit 3" "$rc" 3
like "  naming the workload file" "$out" "^benchctl: $tmp/bad/w.json:1:"
out=$("$BENCHCTL" --workloads-dir "$tmp/bad" render --system local ssd --set w.x=1 2>&1); rc=$?
is "a --set of its section: exit 3" "$rc" 3
like "  naming the workload file" "$out" "^benchctl: $tmp/bad/w.json:1:"

# only the files used are read: NAME.json of the first directory that has it and
# the files it extends (a file there that is not JSON is never opened otherwise)
rm -rf "$tmp/lazy" && mkdir -p "$tmp/lazy"
cp "$tmp/wl/toy.json" "$tmp/lazy/toy.json"
printf '{ "extends": "toy", "title": "toy, batch 2", "keys": { "batch": { "default": 2 } } }\n' > "$tmp/lazy/toy2.json"
for i in 1 2 3; do printf 'not JSON' > "$tmp/lazy/junk$i.json"; done
out=$(launch --workloads-dir "$tmp/lazy" render --system local toy2 --run-id x)
like "render reads its file and the one it extends, not the others" "$out" "--batch-size 2 "
mkdir -p "$tmp/coco/annotations" "$tmp/coco/train2017"
echo '{}' > "$tmp/coco/annotations/instances_train2017.json"
out=$("$BENCHCTL" --workloads-dir "$tmp/lazy" submit --system local toy2 --data "$tmp/coco" --dry-run 2>&1); rc=$?
is "  submit --dry-run too: exit 0" "$rc" 0
like "  saying what it would start" "$out" "dry run: toy2 on local"
out=$("$BENCHCTL" --workloads-dir "$tmp/lazy" --systems-dir "$tmp/sys" show mine --json); rc=$?
is "  show of a system with a section of a path workload: exit 0" "$rc" 0
like "  its section" "$out" '"batch":[[:space:]]*4'
out=$("$BENCHCTL" --workloads-dir "$tmp/lazy" workloads 2>&1); rc=$?
is "workloads reads every file: exit 3" "$rc" 3
like "  the first bad one" "$out" "junk1.json:1:"
done_testing

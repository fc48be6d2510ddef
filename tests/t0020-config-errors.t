#!/bin/bash
# Bad input through the command line: one line on stderr, the exit status of
# its kind (3: configuration, 2: usage, 1: a file), nothing written.
. "${srcdir:-.}/tests/lib.sh"
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
sys="$tmp/systems"; mkdir -p "$sys"

expect_error() {   # description, pattern, command...; want: the exit status (3)
    local desc=$1 pattern=$2; shift 2
    local err rc
    err=$("$@" 2>&1 >/dev/null); rc=$?
    is "$desc: exit ${want:-3}" "$rc" "${want:-3}"
    like "$desc: message" "$err" "$pattern"
    is "$desc: one line" "$(printf '%s\n' "$err" | wc -l)" 1
}

expect_error "unknown system" "unknown system 'C4141' \(did you mean 'C4140'\?\); known systems: 24xlocal, 24xp3dn, 2xC4140, 4xC4140, 4xlocal, 4xlocal-ch, C4140, DSS8440, local, local-podman, p3.16xlarge, p3dn" \
    "$BENCHCTL" show C4141
expect_error "unknown workload" "unknown workload 'resnet50'; known workloads: ssd, maskrcnn, allreduce" \
    "$BENCHCTL" render --system local resnet50

printf '{ "extends": "nothere" }\n' > "$sys/orphan.json"
expect_error "missing parent" "orphan.json: missing parent system 'nothere'" "$BENCHCTL" --systems-dir "$sys" show orphan
printf '{ "extends": "b" }\n' > "$sys/a.json"; printf '{ "extends": "a" }\n' > "$sys/b.json"
expect_error "cycle" "'extends' cycle: .*a.json -> .*b.json -> .*a.json" "$BENCHCTL" --systems-dir "$sys" show a
printf '{\n  "nodes": 2,\n  "gpus_per_node": -4\n}\n' > "$sys/neg.json"
expect_error "negative GPUs" "neg.json:3: 'gpus_per_node': expected an integer in \[0, 64\], got -4" \
    "$BENCHCTL" --systems-dir "$sys" show neg
printf '{\n  "ranks_per_node": 64,\n  "cpu": { "cores_per_socket": 8 }\n}\n' > "$sys/many.json"
expect_error "more ranks than cores" "more ranks per node \(64\) than cores" "$BENCHCTL" --systems-dir "$sys" show many
printf '{\n  "slurm": {\n    "partitoin": "gpu"\n  }\n}\n' > "$sys/typo.json"
expect_error "unknown key" "typo.json:3: 'slurm.partitoin': unknown key \(did you mean 'slurm.partition'\?\)" \
    "$BENCHCTL" --systems-dir "$sys" show typo
printf '{\n  "nodes": 2,\n  "gpus_per_node": 4,,\n}\n' > "$sys/broken.json"
expect_error "malformed JSON" "broken.json:3:22: malformed JSON near ','" "$BENCHCTL" --systems-dir "$sys" show broken
printf '{ bad json\n' > "$sys/word.json"
expect_error "malformed JSON: the column of the bad token's first character" "word.json:1:3: malformed JSON near 'bad json'" \
    "$BENCHCTL" --systems-dir "$sys" show word
printf '{\n  "nodes": 2,\n}\n' > "$sys/comma.json"
expect_error "a trailing comma: the column of the brace after it" "comma.json:3:1: malformed JSON near '}'" \
    "$BENCHCTL" --systems-dir "$sys" show comma
printf '{ "nodes": "two" }\n' > "$sys/str.json"
expect_error "wrong type" "'nodes': expected an integer in \\[1, 100000\\], got 'two'" "$BENCHCTL" --systems-dir "$sys" show str
expect_error "--set unknown key" "--set: unknown key 'ssd.batchsize' \(did you mean 'ssd.batch_size'\?\)" \
    "$BENCHCTL" show local --set ssd.batchsize=3
expect_error "--set wrong type" "'ssd.batch_size': expected an integer in \[1, 65536\], got 'many'" \
    "$BENCHCTL" show local --set ssd.batch_size=many
expect_error "--set malformed" "--set 'ssd.batch_size': expected KEY=VALUE" "$BENCHCTL" show local --set ssd.batch_size
expect_error "--set out of range" "got 0" "$BENCHCTL" show local --set nodes=0
expect_error "--set above a large bound" \
    "^benchctl: --set allreduce.max_bytes: 'allreduce.max_bytes': expected an integer in \[4, 1000000000000\], got 1e\+20$" \
    "$BENCHCTL" show local --set allreduce.max_bytes=1e20
expect_error "--set out of range: the value in full" \
    "^benchctl: --set trials: 'trials': expected an integer in \[1, 100\], got 2000000$" \
    "$BENCHCTL" show local --set trials=2000000
expect_error "--set not an integer: the value as given" "expected an integer in \[1, 100\], got 2.5$" \
    "$BENCHCTL" show local --set trials=2.5
expect_error "an evaluation after the last epoch" \
    "^benchctl: .*/local.json with --set: 'ssd.eval_epochs': epoch 10 is beyond 'ssd.epochs' \(2\)$" \
    "$BENCHCTL" show local --set ssd.epochs=2
printf '{\n  "allreduce": { "min_bytes": 99999999999999999999 }\n}\n' > "$sys/huge.json"
expect_error "a file value above a large bound" \
    "huge.json:2: 'allreduce.min_bytes': expected an integer in \[4, 1000000000000\], got 1e\+20" \
    "$BENCHCTL" --systems-dir "$sys" show huge
want=2 expect_error "bind rank out of range (a usage error)" "--local-rank 8: p3dn has 8 ranks per node" \
    "$BENCHCTL" bind --system p3dn --local-rank 8

# nothing written to -o on any error, and an old file is left alone
expect_error "render error" "unknown system" "$BENCHCTL" render --system nosuch ssd -o "$tmp/out.sh"
check_fails "no output file after an error" test -e "$tmp/out.sh"
echo old > "$tmp/keep.sh"
"$BENCHCTL" render --system local ssd --set ssd.batch_size=-1 -o "$tmp/keep.sh" 2>/dev/null
is "an existing file is untouched after an error" "$(cat "$tmp/keep.sh")" old
want=1 expect_error "unwritable -o" "cannot create a file next to '/nonexistent/dir/x.sh'" \
    "$BENCHCTL" render --system local ssd -o /nonexistent/dir/x.sh
check_fails "no temporary files left behind" sh -c "ls '$tmp' | grep -q tmp"
# "did you mean": the key's own name weighed, not its section's; a word's
# beginning; case
err=$("$BENCHCTL" render --system local maskrcnn --set maskrcnn.checkpoint=1 2>&1)
unlike "maskrcnn.checkpoint: not maskrcnn.backbone" "$err" "did you mean 'maskrcnn.backbone'"
err=$("$BENCHCTL" render --system local maskrcnn --set gpus=1 2>&1)
like "gpus: gpus_per_node, not cpu" "$err" "unknown key 'gpus' \(did you mean 'gpus_per_node'\?\)"
err=$("$BENCHCTL" render --system local maskrcnn --set maskrcnn.precison=fp32 2>&1)
like "a typo of a key: its key" "$err" "did you mean 'maskrcnn.precision'\?"
err=$("$BENCHCTL" render --system local MaskRCNN 2>&1)
like "a workload in capitals: the workload" "$err" "unknown workload 'MaskRCNN' \(did you mean 'maskrcnn'\?\)"
# a batch of all ranks that is not a multiple of them: refused here, not by the trainer
err=$("$BENCHCTL" render --system p3dn maskrcnn --set maskrcnn.ims_per_batch=10 2>&1); rc=$?
is "ims_per_batch 10 on 8 ranks: exit 3" "$rc" 3
like "  why, naming the key and the ranks" "$err" "'maskrcnn\.ims_per_batch' \(10\) is not a multiple of the 8 ranks"
check "ims_per_batch 16 on 8 ranks renders" "$BENCHCTL" render --system p3dn maskrcnn --set maskrcnn.ims_per_batch=16 -o "$tmp/p3dn16.sh"
# a schedule out of order: refused, the file named with --set (its values are
# the command line's); one past the end: said, kept (a document's own has one)
err=$("$BENCHCTL" render --system local ssd --set 'ssd.decay_epochs=[20,16]' 2>&1); rc=$?
is "decay_epochs out of order: exit 3" "$rc" 3
like "  which, and that --set gave it" "$err" "local\.json with --set: 'ssd\.decay_epochs': 16 after 20: in ascending order"
err=$("$BENCHCTL" render --system local ssd --set 'ssd.decay_epochs=[16,30]' -o "$tmp/late.sh" 2>&1); rc=$?
is "a decay after the last epoch: rendered (exit 0)" "$rc" 0
like "  with a warning naming it" "$err" "warning: local: 'ssd\.decay_epochs': 30 is after the last \('ssd\.epochs' 24\): it never applies"
err=$("$BENCHCTL" render --system 24xp3dn maskrcnn -o "$tmp/24.sh" 2>&1)
like "the 24-node document's own schedule: kept, said" "$err" "'maskrcnn\.decay_epochs': 14 is after the last \('maskrcnn\.epochs' 12\)"
done_testing

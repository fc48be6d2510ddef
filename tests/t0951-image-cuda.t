#!/bin/bash
# The CUDA image (make check-image-cuda): this build's packages with the
# CUDA backend (make deb-cuda, for one GPU architecture: $BENCHD_TEST_CUDA_ARCH,
# default 90), benchctl image build --cuda from Debian's archive plus the
# CUDA libraries the trainers need (the CUDA runtime, cuBLAS and cuBLASLt,
# cuDNN with the libraries it loads itself, NCCL, NVRTC), image info's
# record of them; inside the image (ch-run, and podman where installed)
# every library of every trainer resolves, the CPU backend trains, and the
# CUDA backend, with no GPU driver here, says that the driver is missing
# (not a library).  No driver library is in the image.
. "${srcdir:-.}/tests/lib.sh"
. "${srcdir:-.}/tests/image-lib.sh"
grep -q '^#define HAVE_CUDA 1' "$top_builddir/config.h" || skip_all "this build has no CUDA backend (configure --with-cuda)"
image_tools_or_skip
command -v ch-run >/dev/null || skip_all "ch-run not installed (charliecloud-runtime)"
[ -e /dev/nvidia0 ] && skip_all "a GPU driver is here: this test checks the image's behaviour without one"
own_runs
version=$("$BENCHCTL" --version | head -1 | awk '{ print $2 }')
arch=${BENCHD_TEST_CUDA_ARCH:-90}
cuda=$(sed -n 's/^CUDA_DIR = //p' "$top_builddir/Makefile")

check "make deb-cuda: this build's packages with the CUDA backend (sm_$arch)" image_debs deb-cuda "CUDA_ARCH_LIST=$arch"
like "  versions end in +cuda" "$(dpkg-deb -f "$top_builddir"/deb-cuda/benchd-trainers_*.deb Version)" "^$version\+cuda$"
unlike "  and depend on no CUDA package" "$(dpkg-deb -f "$top_builddir"/deb-cuda/benchd-trainers_*.deb Depends)" \
       "cuda|cudnn|nccl|nvidia"

out=$(image_build --debs "$top_builddir/deb-cuda" --format dir -o "$tmp/no" 2>&1); rc=$?
is "CUDA packages without --cuda: refused" "$rc" 1
like "  saying why" "$out" "is a CUDA build \(version $version\+cuda\): add --cuda"
check "  nothing written" test ! -e "$tmp/no"

out=$(image_build --cuda --debs "$top_builddir/deb-cuda" --format dir -o "$tmp/img" 2>&1); rc=$?
is "image build --cuda (directory) exits 0" "$rc" 0
printf '%s\n' "$out" | sed 's/^/#   /'
like "  it says what it carries and from where" "$out" \
     "CUDA: [0-9]+ libraries \([0-9]+ MiB\) from $(readlink -f "$cuda")/lib(64)? into /usr/local/cuda/lib64"
info=$("$BENCHCTL" image info "$tmp/img"); rc=$?
is "image info exits 0" "$rc" 0
printf '%s\n' "$info" | sed 's/^/#   /'
cv=$(sed -n 's/^#define CUDA_VERSION \([0-9]*\).*/\1/p' "$cuda/include/cuda.h")
like "  the CUDA version of the installation's headers" "$info" "^cuda +CUDA $((cv / 1000))\.$((cv % 1000 / 10)), cuDNN 9\.[0-9]+\.[0-9]+, NCCL 2\.[0-9]+\.[0-9]+: [0-9]+ libraries"
like "  the driver: the host's" "$info" "^gpu driver +the host's, at run time \(.*libcuda\.so\.1"
like "  both backends" "$info" "^runtime +charliecloud \(dir\), backends cpu cuda$"
is "  --json: the runtime, cuBLAS(Lt), cuDNN and what it loads, NCCL, NVRTC, each with its size" "$("$BENCHCTL" image info --json "$tmp/img" |
    python3 -c '
import json, re, sys
c = json.load(sys.stdin)["cuda"]
names = {l["soname"] for l in c["libraries"]}
want = ["libcudart.so", "libcublas.so", "libcublasLt.so", "libcudnn.so.9", "libcudnn_cnn.so.9",
        "libcudnn_ops.so.9", "libcudnn_engines_precompiled.so.9", "libnccl.so.2", "libnvrtc.so"]
missing = [w for w in want if not any(n.startswith(w) for n in names)]
sized = all(l["bytes"] > 0 and l["needed_by"] for l in c["libraries"])
print(missing, sized, c["bytes"] == sum(l["bytes"] for l in c["libraries"]), c["lib_dir"])')" \
   "[] True True /usr/local/cuda/lib64"
is "  the files are there" "$(cd "$tmp/img/usr/local/cuda/lib64" && ls | grep -c '^lib.*\.so')" \
   "$("$BENCHCTL" image info --json "$tmp/img" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["cuda"]["libraries"]))')"
is "  no driver library in the image" "$(find "$tmp/img" -name 'libcuda.so*' -o -name 'libnvidia-*' | wc -l)" 0

export USER=${USER:-root}
in_img() { ch-run "$tmp/img" -- "$@"; }
# ldd's lines of each file: "resolved N" (libraries found) and "missing M"
ldd_all() {
    local f out
    for f in "$@"; do
        out=$(in_img ldd "$f" 2>&1) || { echo "ldd failed on $f: $out"; continue; }
        echo "$f resolved $(grep -c '=> /' <<<"$out") missing $(grep -c 'not found' <<<"$out")"
    done
}
out=$(ldd_all /usr/bin/benchd-ssd /usr/bin/benchd-maskrcnn /usr/bin/benchd-allreduce)
printf '%s\n' "$out" | sed 's/^/#   /'
is "ch-run: every library of every trainer resolves" "$(grep -c 'resolved [1-9][0-9]* missing 0$' <<<"$out")" 3
libs=("$tmp"/img/usr/local/cuda/lib64/*.so*)
out=$(ldd_all "${libs[@]/#$tmp\/img/}")
is "  and of every carried library" "$(grep -c 'resolved [1-9][0-9]* missing 0$' <<<"$out")" "${#libs[@]}"
like "  the trainer's CUDA libraries are the image's" "$(in_img ldd /usr/bin/benchd-ssd)" \
     "libcudnn\.so\.9 => /usr/local/cuda/lib64/libcudnn\.so\.9"
out=$(in_img benchd-ssd --synthetic --backend cpu --batch-size 2 --image-size 64 --max-steps 2 2>&1)
like "ch-run: the CPU backend trains in the CUDA image" "$out" '"key": "run_stop".*"status": "aborted"'
out=$(in_img benchd-ssd --synthetic --backend cuda --batch-size 2 --image-size 64 --max-steps 2 2>&1); rc=$?
check "ch-run: the CUDA backend without a GPU driver fails (exit $rc)" [ "$rc" != 0 ]
like "  saying the driver is missing, not a library" "$(printf '%s\n' "$out" | tail -1)" \
     "benchd-ssd: backend cuda: no GPU driver: libcuda\.so\.1 is not on this host"

if ! command -v podman >/dev/null; then
    skip 4 "podman: not installed"
else
    ref="localhost/benchd/trainers-cuda-test:$$"
    podman rmi -f "$ref" >/dev/null 2>&1
    out=$(image_build --cuda --debs "$top_builddir/deb-cuda" --runtime podman --tag "$ref" -o "$tmp/img.oci.tar" 2>&1); rc=$?
    is "image build --cuda --runtime podman: an OCI archive" "$rc" 0
    check "  podman loads it" bash -c "podman load -q -i '$tmp/img.oci.tar' >/dev/null && podman image exists '$ref'"
    prun=("${podman_run[@]}" "$ref")
    if ! podman_ready "$ref"; then
        skip 2 "podman cannot start a container here: $podman_why"
    else
        [ -z "$podman_note" ] || echo "# $podman_note"
        out=$("${prun[@]}" ldd /usr/bin/benchd-ssd 2>&1)
        check "  podman run: every library of benchd-ssd resolves, cuDNN from the image" \
              bash -c "! grep -q 'not found' <<<'$out' && grep -q 'libcudnn.so.9 => /usr/local/cuda/lib64/' <<<'$out'"
        like "  and the CUDA backend says the driver is missing" \
             "$("${prun[@]}" benchd-ssd --synthetic --backend cuda --max-steps 1 2>&1 | tail -1)" \
             "no GPU driver: libcuda\.so\.1"
    fi
    podman rmi -f "$ref" >/dev/null 2>&1
fi
dev_null_ok
done_testing

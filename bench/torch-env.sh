# bench/torch-env.sh: the environment the Mask R-CNN benchmarks run
# torchvision in (sourced by maskrcnn-step.sh and maskrcnn-learn.sh).
# shellcheck shell=bash disable=SC2154  # build: set by the caller
#
# torch_blas: Debian's torch does its matrix products (nn.Linear: the box
# head's fc6 is 1024 x 12544 x 1024 per step at the reference size) in
# whatever libblas.so.3 is installed, the reference BLAS by default: 1.3
# GFLOP/s here, 20x slower than OpenBLAS, which a user would have (PyPI's
# torch bundles MKL).  Unless TORCH_BLAS=system, OpenBLAS (Debian's
# libopenblas0-pthread, fetched once with apt-get download into
# BUILD/openblas, not installed) goes first on LD_LIBRARY_PATH for the
# Python side; OPENBLAS_NUM_THREADS is set by the caller.
torch_blas() {
        local dir="$build/openblas/root/usr/lib/x86_64-linux-gnu/openblas-pthread"
        [ "${TORCH_BLAS:-openblas}" = system ] && return 0
        if [ ! -e "$dir/libblas.so.3" ]; then
                mkdir -p "$build/openblas"
                (cd "$build/openblas" && apt-get download -q libopenblas0-pthread >/dev/null 2>&1 &&
                        dpkg -x libopenblas0-pthread_*.deb root) ||
                        { echo "torch-env: cannot fetch libopenblas0-pthread (TORCH_BLAS=system to go without)" >&2
                          return 1; }
        fi
        export LD_LIBRARY_PATH="$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
}
# torch_blas_name: the BLAS torch loads in this environment
torch_blas_name() {
        /usr/bin/python3 -c 'import os, torch
libs = {l.split()[-1] for l in open("/proc/self/maps") if "blas" in l}
print(" ".join(sorted(os.path.basename(os.path.dirname(x)) + "/" + os.path.basename(x) for x in libs)))'
}
# OpenMP threads that spin while they wait (GNU OpenMP's default) cost the
# most when other tenants load the machine: on this 2-vCPU VM at 98% CPU
# pressure a small-configuration step took torch 8-15 s spinning against
# 0.5-0.9 s passive, and ours 1.5-4.8 s against 0.7 s.  Both sides get the
# same policy: OMP_WAIT_POLICY (default passive here; set it to active on
# a quiet machine of your own).
export OMP_WAIT_POLICY=${OMP_WAIT_POLICY:-passive}

#!/bin/bash
# bench/gpu-bundle.sh: packs a CUDA build's programs and the Debian libraries
# they load into one archive, for a GPU machine that has the NVIDIA driver
# and CUDA libraries but not this machine's packages (a lent GPU session:
# /work/.library/device).
#
#   bench/gpu-bundle.sh [BUILD_DIR] [OUT.tar.xz]
#
# The archive unpacks to gpu/: gpu/build (the programs at their places in the
# build tree, stripped, and config.h), gpu/lib (every library they load that
# is neither glibc's nor CUDA's), gpu/openmpi (Open MPI's plugins and help
# files, which MPI_Init reads from their installed paths) and gpu/env.sh,
# which, sourced there, puts gpu/lib and the machine's CUDA libraries
# (cuDNN, cuBLAS, NCCL, the runtime: wherever they are, PyTorch's wheels
# included) on LD_LIBRARY_PATH and copies Open MPI's files into place when
# the machine has none.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
out=${2:-$src/.gpu/bundle.tar.xz}
grep -q '^#define HAVE_CUDA 1' "$build/config.h" || { echo "gpu-bundle.sh: $build was built without CUDA" >&2; exit 1; }
progs=(benchd-ssd benchd-maskrcnn benchd-allreduce benchctl benchd-dataset bench/maskrcnn-step tests/helper/trainer-tool
       tests/helper/ssd-cuda-check tests/gpu/test-trainer-gpu tests/gpu/test-det-boxes-gpu
       tests/gpu/test-det-masks-gpu tests/gpu/test-det-roi-gpu tests/gpu/test-mrcnn-gpu)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/gpu/build" "$tmp/gpu/lib" "$tmp/gpu/openmpi"
cp "$build/config.h" "$tmp/gpu/build/"
for p in "${progs[@]}"; do
    [ -x "$build/$p" ] || { echo "gpu-bundle.sh: $build/$p not built" >&2; exit 1; }
    mkdir -p "$tmp/gpu/build/$(dirname "$p")"
    strip -o "$tmp/gpu/build/$p" "$build/$p"
done
# libraries: not glibc's (the GPU machine's is newer), not CUDA's (the
# machine's own must match its driver)
{ ldd "${progs[@]/#/$build/}" 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libresolv|libutil)\.so|/usr/local/cuda|libcuda\.so|libcudnn|libcublas|libnccl|libcudart' |
    while read -r l; do cp -L "$l" "$tmp/gpu/lib/"; done
# Open MPI's launcher and daemon (two ranks on one GPU), a python3 with the
# machine's own library path (PyTorch brings its own cuDNN), Open MPI's
# components (dlopened by MPI_Init) and its help texts
mkdir -p "$tmp/gpu/bin"
for b in orterun orted; do cp -L "/usr/bin/$b" "$tmp/gpu/bin/"; done
ln -s orterun "$tmp/gpu/bin/mpirun"
cat > "$tmp/gpu/bin/python3" <<'PY'
#!/bin/sh
LD_LIBRARY_PATH=$BD_GPU_ORIG_LD_LIBRARY_PATH; export LD_LIBRARY_PATH
PATH=$BD_GPU_ORIG_PATH exec python3 "$@"
PY
chmod +x "$tmp/gpu/bin/python3"
for d in /usr/lib/x86_64-linux-gnu/openmpi /usr/share/openmpi /etc/openmpi; do
    [ -d "$d" ] && mkdir -p "$tmp/gpu/openmpi$(dirname "$d")" && cp -a "$d" "$tmp/gpu/openmpi$(dirname "$d")/"
done
# what the components load beyond libmpi's own libraries
{ find "$tmp/gpu/openmpi" -name '*.so' -exec ldd {} + 2>/dev/null || true; } | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' |
    sort -u | grep -Ev '/(libc|libm|libdl|libpthread|librt|ld-linux-x86-64|libresolv|libutil)\.so|libcuda\.so' |
    while read -r l; do if [ ! -e "$tmp/gpu/lib/$(basename "$l")" ]; then cp -L "$l" "$tmp/gpu/lib/"; fi; done
cat > "$tmp/gpu/env.sh" <<'EOF'
# sourced on the GPU machine: gpu-bundle.sh's libraries and the machine's CUDA
gpu=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cudalibs=
for n in libcudnn.so.9 libcublas.so.13 libcublasLt.so.13 libnccl.so.2 libcudart.so.13; do
    f=$(find -H /usr/local/cuda/lib64 /usr/local/cuda/targets /usr/lib/x86_64-linux-gnu /opt /usr/local/lib \
        -name "$n" 2>/dev/null | head -1)
    [ -n "$f" ] || { echo "env.sh: no $n on this machine" >&2; continue; }
    case ":$cudalibs:" in *":$(dirname "$f"):"*) ;; *) cudalibs=$cudalibs:$(dirname "$f") ;; esac
done
# (sourced twice, the first one's originals stay: the wrapper must not find itself)
[ -n "${BD_GPU_ORIG_PATH:-}" ] || export BD_GPU_ORIG_LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-} BD_GPU_ORIG_PATH=$PATH
export LD_LIBRARY_PATH="$gpu/lib$cudalibs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$gpu/bin:$PATH" PYTHON="$gpu/bin/python3"
# Debian's Open MPI where it looks for it, without replacing what is there;
# a process started without mpirun initialises MPI on its own
cp -an "$gpu/openmpi/." / 2>/dev/null || echo "env.sh: Open MPI's components not installed" >&2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_ess_singleton_isolated=1
EOF
mkdir -p "$(dirname "$out")"
tar -C "$tmp" -cJf "$out.tmp" gpu && mv "$out.tmp" "$out"
echo "gpu-bundle.sh: $out ($(du -h "$out" | cut -f1)): ${#progs[@]} programs, $(find "$tmp/gpu/lib" -type f | wc -l) libraries"

#!/bin/bash
# quickstart.sh: from a fresh Debian 12 machine to a finished benchmark.
#
#   ./quickstart.sh          install dependencies, build, and run the allreduce
#                            and SSD benchmarks on the 'local' system (this machine)
#   ./quickstart.sh test     install dependencies, build, and run the test suite
#
# Dependencies come from Debian's packages (apt-get, as root or through sudo).
# The build goes to ./build; nothing is installed outside it.
set -euo pipefail
cd "$(dirname "$0")"
top=$PWD
mode=${1:-run}
case "$mode" in
    run|test) ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    *) echo "quickstart.sh: unknown mode '$mode' (run or test)" >&2; exit 2 ;;
esac

DEPS=(
    build-essential autoconf automake pkg-config clang
    libcjson-dev libcurl4-openssl-dev libmicrohttpd-dev libsystemd-dev libslurm-dev
    libnuma-dev libopenmpi-dev openmpi-bin libdnnl-dev libturbojpeg0-dev libjpeg62-turbo-dev libsqlite3-dev
    libxxhash-dev libarchive-dev slurm-wlm munge shellcheck numactl python3 curl
    prometheus wrk systemd iproute2 bc xxhash python3-torch python3-torchvision chromium zip unzip
)

install_deps() {
    local missing=() p
    for p in "${DEPS[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    echo "quickstart: installing ${missing[*]}" >&2
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
    [ -x configure ] || ./autogen.sh
    mkdir -p build
    if [ ! -f build/Makefile ]; then
        (cd build && ../configure --enable-werror)
    fi
    make -C build -j"$(nproc)"
}

install_deps
build
if [ "$mode" = test ]; then
    status=0
    make -C build -j"$(nproc)" check || status=$?
    exit "$status"
fi

# The main job on the local default system: the allreduce benchmark on
# 'local' (two ranks on this machine), followed to the end, then its report;
# then SSD on the generated shapes dataset (systems/local.json's settings:
# bbox mAP 0.30 in minutes on two cores) when benchd-ssd was built, and Mask
# R-CNN's small configuration on 128-pixel shapes (bbox and segm AP 0.30,
# a few minutes too) when benchd-maskrcnn was built.
status=0
build/benchctl submit --system local allreduce --wait || status=$?
build/benchctl report last --reference || status=1
if [ -x build/benchd-ssd ]; then
    data=$HOME/.local/share/benchd/data/coco-synth     # paths.data of systems/local.json
    [ -d "$data/train2017" ] ||
        build/benchctl dataset synth --images 1200 --val-images 200 --seed 1 -o "$data" || status=1
    build/benchctl submit --system local ssd --data "$data" --wait || status=$?
    build/benchctl report last || status=1
fi
if [ -x build/benchd-maskrcnn ]; then
    data=$HOME/.local/share/benchd/data/shapes-128     # as systems/local.json's maskrcnn section says
    [ -d "$data/train2017" ] ||
        build/benchctl dataset synth --images 2000 --val-images 200 --size 128 --classes 3 --objects 3 --seed 1 \
            -o "$data" || status=1
    build/benchctl submit --system local maskrcnn --data "$data" --wait || status=$?
    build/benchctl report last || status=1
fi
exit "$status"

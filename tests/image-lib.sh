# shellcheck shell=bash disable=SC2154
# tests/image-lib.sh: the packages and images of make check-image's tests,
# sourced after tests/lib.sh.
#
# image_debs [deb-cuda [MAKE-ARGS...]]
#                     make deb (or deb-cuda) in the build tree unless deb/
#                     (deb-cuda/) is newer than the programs and debian/'s
#                     files (a full package build: a minute or two)
# image_build ARGS... benchctl image build ARGS with the shared cache
#                     ($BENCHD_IMAGE_CACHE, default ~/.cache/benchd/images:
#                     the base root file system is made once per package
#                     list) and checks /dev/null afterwards
# dev_null_ok         fails loudly when /dev/null is no longer a device
# podman_run          podman run with the limits systems/local-podman.json
#                     sets (an array: "${podman_run[@]}" IMAGE CMD...)
# podman_ready REF    0 when podman starts a container of REF that way; where crun
#                     refuses this machine's cgroups (v1 with a v2
#                     hierarchy beside it: "hybrid mode") and runc is
#                     installed, podman is pointed at runc through a
#                     containers.conf of the test's ($CONTAINERS_CONF,
#                     exported; $podman_note says so); else 1, the reason
#                     in $podman_why

export BENCHD_IMAGE_CACHE=${BENCHD_IMAGE_CACHE:-$HOME/.cache/benchd/images}
export USER=${USER:-$(id -un)}      # ch-run wants it

dev_null_ok() {
    if [ ! -c /dev/null ]; then
        echo "Bail out! /dev/null is no longer a character device: $(ls -l /dev/null)" >&2
        echo "Bail out! /dev/null is no longer a character device"
        exit 1
    fi
}

image_tools_or_skip() {
    local t
    [ "$(id -u)" -eq 0 ] || skip_all "building images needs root (mmdebstrap, dpkg in a chroot)"
    for t in mmdebstrap mksquashfs dpkg-buildpackage dh gpgv; do
        command -v "$t" >/dev/null || skip_all "$t is not installed (CI installs mmdebstrap, squashfs-tools, debhelper, gpgv)"
    done
    [ -e /usr/share/keyrings/debian-archive-keyring.gpg ] || skip_all "debian-archive-keyring is not installed"
}

image_debs() {
    local target=${1:-deb}
    shift || :
    (   # one make deb at a time in a build tree (tests may run in parallel)
        exec 9>"$top_builddir/deb.lock" && flock 9
        newest=$(find "$top_builddir/$target" -name "benchd-trainers_*.deb" 2>/dev/null | head -1)
        # fresh: newer than the programs and than every file of debian/
        if [ -n "$newest" ] && [ "$newest" -nt "$top_builddir/benchctl" ] &&
           [ "$newest" -nt "$top_builddir/benchd-ssd" ] &&
           [ -z "$(find "$srcdir/debian" -type f -newer "$newest" | head -1)" ]; then
            exit 0
        fi
        make -C "$top_builddir" "$target" "$@" >"$top_builddir/$target-make.log" 2>&1 || {
            echo "# make $target failed:"; tail -15 "$top_builddir/$target-make.log" | sed 's/^/#   /'
            exit 1
        }
    )
}

# podman run with systems/local-podman.json's limits: podman's defaults are
# above what root may raise to in a sandbox without CAP_SYS_RESOURCE
podman_run=(podman run --rm --net=none --ulimit nofile=1024:20000 --ulimit nproc=4096:4096)

podman_ready() {
    local ref=$1 probe
    local run=("${podman_run[@]}" "$ref" true)
    podman_note=
    probe=$("${run[@]}" 2>&1) && return 0
    if grep -q "cgroups in hybrid mode" <<<"$probe" && command -v runc >/dev/null; then
        printf '[engine]\nruntime = "runc"\n' > "$tmp/containers.conf"
        export CONTAINERS_CONF=$tmp/containers.conf
        podman_note="podman runs runc here: crun refuses this machine's cgroups (hybrid mode)"
        probe=$("${run[@]}" 2>&1) && return 0
        unset CONTAINERS_CONF
    fi
    podman_why=$(tail -n 1 <<<"$probe")
    return 1
}

image_build() {
    local rc=0
    "$top_builddir/benchctl" image build --debs "$top_builddir/deb" --cache "$BENCHD_IMAGE_CACHE" "$@" || rc=$?
    dev_null_ok
    return "$rc"
}

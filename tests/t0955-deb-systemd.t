#!/bin/bash
# The Debian packages (make deb) and benchd's packaged systemd unit, for
# real.  The packages: benchd, benchctl and benchd-trainers are there, their
# Depends name Debian's library packages (libcjson1, libopenmpi3 and
# openmpi-bin for the trainers), nothing of CUDA and nothing under
# /usr/local, no program has an RPATH; benchd holds its program, unit and
# configuration (a conffile); lintian reports no error.  Installed by
# benchctl image build on a clean Debian 12 root file system (with systemd):
# every program runs there and finds its libraries, dpkg says installed,
# the postinst enabled benchd.service and not benchd.socket.  Booted with
# systemd as PID 1 in systemd-nspawn (own PID, mount and network
# namespaces: --private-network, the host's network is not touched): benchd
# started at boot; systemctl disable --now and enable --now work; the
# daemon runs from /lib/systemd/system/benchd.service with its sandbox
# (no new privileges, seccomp, read-only /usr, a private /tmp, its state
# directory) and answers GET /v1/health on 127.0.0.1:9410 inside the
# container; it stops cleanly; the container powers off and leaves no
# process, mount or cgroup behind.
#
# Needs root, the image tools (image_tools_or_skip) and, for the boot,
# systemd-nspawn: Debian's package systemd-container (CI: apt-get install
# systemd-container).  Where the host runs no systemd (no /run/systemd/system:
# no system bus, no machined) nspawn runs with --register=no --keep-unit in a
# cgroup of this test's own, removed afterwards.  About 30-45 s with a cached
# base (the first build of the base takes a minute more, make deb one or two
# when the programs are newer than deb/).
. "${srcdir:-.}/tests/lib.sh"
. "$srcdir/tests/image-lib.sh"
image_tools_or_skip

# lintian errors known and accepted (tag names, space-separated; none yet)
KNOWN_LINTIAN_ERRORS=""

tmp=$(mktemp -d)
root=$tmp/root
machine=bd-t0955-$$
npid="" leader="" ct_pidns=""
cgs=()

# nspawn_exited: systemd-nspawn (our child) has exited: a zombie or gone
nspawn_exited() {
    local s
    s=$(cat "/proc/$npid/stat" 2>/dev/null) || return 0
    s=${s##*) }
    [ "${s%% *}" = Z ]
}
cleanup() {
    local i d
    if [ -n "$npid" ] && kill -0 "$npid" 2>/dev/null; then
        kill -TERM "$npid" 2>/dev/null       # nspawn powers the container off
        for ((i = 0; i < 300; i++)); do
            nspawn_exited && break
            sleep 0.1
        done
        if ! nspawn_exited; then
            # still up: the container's init takes its PID namespace with it
            [ -n "$leader" ] && [ "$(readlink "/proc/$leader/ns/pid" 2>/dev/null)" = "$ct_pidns" ] &&
                kill -KILL "$leader" 2>/dev/null
            kill -KILL "$npid" 2>/dev/null
        fi
        wait "$npid" 2>/dev/null
    fi
    for d in "${cgs[@]}"; do
        [ -d "$d" ] && find "$d" -depth -type d -exec rmdir {} \; 2>/dev/null
    done
    rmdir "/run/systemd/nspawn/propagate/$machine" 2>/dev/null
    # mounts left under $tmp (none expected: nspawn's and in_root's live in
    # their own mount namespaces)
    awk -v t="$tmp/" 'index($5, t) == 1 { print $5 }' /proc/self/mountinfo | sort -r |
        while read -r d; do umount -R "$d" 2>/dev/null || umount -l "$d" 2>/dev/null; done
    rm -rf --one-file-system "$tmp"
}
trap cleanup EXIT

# ---- the packages ----
t0=$SECONDS
if ! image_debs; then
    _t_result 1 "make deb builds the packages"
    done_testing
    exit
fi
echo "# packages ready in $((SECONDS - t0)) s"
version=$("$BENCHCTL" --version | sed -n '1s/^benchctl //p')
deb=$top_builddir/deb
declare -A debfile
for p in benchd benchctl benchd-trainers; do
    files=()
    for f in "$deb/${p}_"*.deb; do [ -f "$f" ] && files+=("$f"); done
    is "deb/ holds one $p package" "${#files[@]}" 1
    debfile[$p]=${files[0]:-$deb/${p}_missing.deb}
done

for p in benchd benchctl benchd-trainers; do
    f=${debfile[$p]}
    v=$(dpkg-deb -f "$f" Version 2>/dev/null)
    v=${v#*:}
    is "$p: the version of this build ($version)" "${v%-*}" "$version"
    deps=$(dpkg-deb -f "$f" Depends 2>/dev/null)
    like "$p: Depends names Debian's libc6 and libcjson1" "$deps" '(^|, )libc6( |,|$).*(^|, )libcjson1( |,|$)'
    unlike "$p: Depends names nothing of CUDA, NVIDIA or /usr/local" "${deps,,}" 'cuda|cudnn|cublas|nccl|nvidia|/usr/local'
    # every dependency is a package of the host's apt sources (Debian's archive)
    if [ -n "$(apt-cache show --no-all-versions libc6 2>/dev/null)" ]; then
        names=$(tr ',|' '\n' <<<"$deps" | sed 's/(.*//; s/:.*//; s/ //g' | sort -u)
        # shellcheck disable=SC2086 # one name a word
        found=$(apt-cache show --no-all-versions $names 2>/dev/null |
                awk '/^Package:/ { p = $2 } /^Filename: pool\// { print p }' | sort -u)
        is "$p: every dependency is a package of the apt archive" "$(comm -23 <(echo "$names") <(echo "$found"))" ""
    else
        skip 1 "the host's apt lists are empty (apt-get update)"
    fi
    # the programs: no RPATH or RUNPATH (/usr/local or a build tree), no CUDA library
    rm -rf "$tmp/x" && mkdir "$tmp/x" && dpkg-deb -x "$f" "$tmp/x"
    bad="" nprog=0
    for b in "$tmp"/x/usr/bin/*; do
        dyn=$(readelf -d "$b" 2>/dev/null) || continue
        nprog=$((nprog + 1))
        grep -Eq 'R(UN)?PATH' <<<"$dyn" && bad+=" ${b##*/}:rpath"
        grep -i 'NEEDED' <<<"$dyn" | grep -Eqi 'cuda|cudnn|cublas|nccl|nvidia' && bad+=" ${b##*/}:cuda"
    done
    is "$p: its $nprog programs have no RPATH and link no CUDA library" "$nprog${bad:+ $bad}" "$nprog"
done
like "benchd depends on libmicrohttpd12 and libsystemd0" "$(dpkg-deb -f "${debfile[benchd]}" Depends)" \
    'libmicrohttpd12.*libsystemd0'
like "benchctl depends on Debian's libsqlite3-0 (no bundled SQLite)" "$(dpkg-deb -f "${debfile[benchctl]}" Depends)" \
    '(^|, )libsqlite3-0( |,|$)'
tdeps=$(dpkg-deb -f "${debfile[benchd-trainers]}" Depends)
like "benchd-trainers depends on libopenmpi3" "$tdeps" '(^|, )libopenmpi3( |,|$)'
like "benchd-trainers depends on openmpi-bin" "$tdeps" '(^|, )openmpi-bin( |,|$)'

contents=$(dpkg-deb -c "${debfile[benchd]}" 2>&1 | awk '{ print $6 }')
for path in ./usr/bin/benchd ./lib/systemd/system/benchd.service ./etc/benchd/benchd.conf; do
    like "benchd holds ${path#.}" "$contents" "^${path//./\\.}\$"
done
is "benchd: /etc/benchd/benchd.conf is a conffile" "$(dpkg-deb -I "${debfile[benchd]}" conffiles 2>&1)" \
    /etc/benchd/benchd.conf
unit=$(dpkg-deb --fsys-tarfile "${debfile[benchd]}" | tar -xOf - ./lib/systemd/system/benchd.service)
like "the packaged unit runs /usr/bin/benchd with /etc/benchd/benchd.conf" "$unit" \
    '^ExecStart=/usr/bin/benchd --foreground -c /etc/benchd/benchd\.conf$'
contents=$(dpkg-deb -c "${debfile[benchd-trainers]}" 2>&1 | awk '{ print $6 }')
like "benchd-trainers holds the trainers and benchd-bind" \
    "$(grep -Ec '^\./usr/bin/benchd-(ssd|maskrcnn|allreduce|bind)$' <<<"$contents")" '^4$'
like "benchctl holds /usr/bin/benchctl" "$(dpkg-deb -c "${debfile[benchctl]}" | awk '{ print $6 }')" \
    '^\./usr/bin/benchctl$'

if command -v lintian >/dev/null; then
    if [ -f "$deb/lintian.txt" ]; then
        errors=$(grep '^E: ' "$deb/lintian.txt" | while read -r _ _ tag _; do
            [[ " $KNOWN_LINTIAN_ERRORS " == *" $tag "* ]] || echo "$tag"
        done)
        is "lintian reports no error (deb/lintian.txt)" "$errors" ""
        grep '^[EW]: ' "$deb/lintian.txt" | sed 's/^/# lintian: /'
    else
        _t_result 1 "make deb wrote deb/lintian.txt"
    fi
else
    skip 1 "lintian is not installed"
fi

# ---- installed on a clean Debian 12 root file system ----
t0=$SECONDS
if ! image_build --format dir --include systemd,systemd-sysv,dbus,curl,iproute2 -o "$root" \
        >"$tmp/build.out" 2>"$tmp/build.err"; then
    _t_result 1 "benchctl image build --format dir with systemd"
    tail -10 "$tmp/build.err" | sed 's/^/#   /'
    done_testing
    exit
fi
_t_result 0 "benchctl image build --format dir with systemd"
if grep -q 'from the cache' "$tmp/build.err"; then how="its base from the cache"; else how="its base made now"; fi
echo "# root file system built in $((SECONDS - t0)) s ($how)"

# in_root COMMAND...: COMMAND chrooted in the root with /proc and /sys, in
# mount and PID namespaces of its own (the mounts go with them)
in_root() {
    # shellcheck disable=SC2016 # $0 and $@ expand in sh -c, not here
    timeout -k 5 60 unshare --mount --pid --fork --kill-child \
        sh -c 'mount -t proc proc "$0/proc" && mount --rbind /sys "$0/sys" && exec chroot "$0" "$@"' "$root" "$@"
}
out=$(in_root benchctl --version 2>&1)
like "benchctl --version there prints $version" "$out" "^benchctl $version\$"
out=$(in_root benchd --inventory 2>&1)
like "benchd --inventory there: the host" "$out" '^host +[^ ,]+, Debian GNU/Linux 12'
like "benchd --inventory there: the CPUs" "$out" '^cpu +.*[1-9][0-9]* sockets? x [1-9][0-9]* cores?'
like "benchd-ssd --help there" "$(in_root benchd-ssd --help 2>&1)" '^usage: benchd-ssd '
like "benchd-maskrcnn --help there" "$(in_root benchd-maskrcnn --help 2>&1)" '^usage: benchd-maskrcnn '
like "benchd-allreduce --version there" "$(in_root benchd-allreduce --version 2>&1)" "^benchd-allreduce $version\$"
# shellcheck disable=SC2016 # $f expands in the root, not here
out=$(in_root sh -c 'for f in /usr/bin/bench*; do head -c 2 "$f" | grep -q "#!" && continue; echo "$f:"; ldd "$f"; done' 2>&1)
unlike "every program finds its libraries there, none under /usr/local (scripts aside)" "$out" 'not found|/usr/local|not a dynamic'
# shellcheck disable=SC2016 # dpkg-query's format, not the shell's
is "dpkg: the three packages are installed" \
    "$(chroot "$root" dpkg-query -W -f '${Package} ${Status}\n' benchd benchctl benchd-trainers 2>&1 | sort |
       tr '\n' ';')" \
    "benchctl install ok installed;benchd install ok installed;benchd-trainers install ok installed;"
is "dpkg --audit finds nothing half-installed" "$(chroot "$root" dpkg --audit 2>&1)" ""
check "the unit file is installed" test -f "$root/lib/systemd/system/benchd.service"
is "the postinst enabled benchd.service (multi-user.target.wants)" \
    "$(readlink "$root/etc/systemd/system/multi-user.target.wants/benchd.service")" /lib/systemd/system/benchd.service
is "systemctl is-enabled benchd there" "$(chroot "$root" systemctl is-enabled benchd.service 2>&1)" enabled
is "benchd.socket is installed but not enabled" "$(chroot "$root" systemctl is-enabled benchd.socket 2>&1)" disabled

# ---- booted: systemd as PID 1 in systemd-nspawn ----
N3=25                   # the tests of this part
p3_start=$t_n
bail() { skip $((N3 - (t_n - p3_start))) "$1"; done_testing; exit; }
command -v systemd-nspawn >/dev/null ||
    bail "systemd-nspawn is not installed (apt-get install systemd-container)"

# ct COMMAND...: COMMAND in every namespace of the container (its root too)
ct() {
    timeout -k 5 60 nsenter -t "$leader" -a env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"
}

nspawn_opts=(-D "$root" -b --private-network -M "$machine" --register=no --console=read-only)
if [ ! -d /run/systemd/system ]; then
    # no systemd on the host: no scope to ask for; nspawn stays in the
    # cgroup it starts in, and makes its payload and supervisor cgroups
    # there: one of this test's own in every hierarchy systemd uses
    nspawn_opts+=(--keep-unit)
    while IFS=: read -r _ ctl path; do
        case $ctl in
        "") if [ "$(stat -fc %T /sys/fs/cgroup)" = cgroup2fs ]; then mnt=/sys/fs/cgroup
            else mnt=/sys/fs/cgroup/unified; fi ;;
        name=systemd) mnt=/sys/fs/cgroup/systemd ;;
        *) continue ;;
        esac
        mountpoint -q "$mnt" || continue
        d="$mnt${path%/}/$machine"
        mkdir "$d" && cgs+=("$d")
    done </proc/self/cgroup
fi
t0=$SECONDS
(
    for d in "${cgs[@]}"; do
        echo "$BASHPID" >"$d/cgroup.procs" || { echo "cannot move into the cgroup $d"; exit 97; }
    done
    exec systemd-nspawn "${nspawn_opts[@]}"
) </dev/null >"$tmp/nspawn.log" 2>&1 &
npid=$!

# the container's init: nspawn's child, systemd, in a PID namespace of its own
find_leader() {
    local c
    for c in $(pgrep -P "$npid"); do
        if [ "$(cat "/proc/$c/comm" 2>/dev/null)" = systemd ] &&
           [ "$(readlink "/proc/$c/ns/pid")" != "$(readlink /proc/self/ns/pid)" ]; then
            ct_pidns=$(readlink "/proc/$c/ns/pid")
            leader=$c
            return 0
        fi
    done
    return 1
}
deadline=$((SECONDS + 60))
until find_leader || nspawn_exited || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.1; done
if [ -z "$leader" ]; then
    if nspawn_exited; then
        wait "$npid"
        rc=$?
        npid=""
        why=$(grep -Ev '^(Spawning container|Press \^\])|^$' "$tmp/nspawn.log" | tail -1)
        sed 's/^/#   nspawn: /' "$tmp/nspawn.log" | tail -8
        bail "systemd cannot boot in a container here: systemd-nspawn exited with status $rc: $why"
    fi
    _t_result 1 "the container's systemd starts within 60 s"
    tail -8 "$tmp/nspawn.log" | sed 's/^/#   nspawn: /'
    bail "the container did not start"
fi
state=""
while [ "$SECONDS" -lt "$deadline" ]; do
    state=$(ct systemctl is-system-running --wait 2>/dev/null)
    case $state in running|degraded) break ;; esac
    sleep 0.2
done
like "the container boots to multi-user (systemd is PID 1: $state)" "$state" '^(running|degraded)$'
[ "$state" = running ] || ct systemctl list-units --failed --plain --no-legend 2>&1 | sed 's/^/#   failed: /'
[ "$state" = running ] || [ "$state" = degraded ] || {
    tail -8 "$tmp/nspawn.log" | sed 's/^/#   nspawn: /'
    bail "the container did not boot"
}
echo "# container booted in $((SECONDS - t0)) s"
is "its network is private: only lo" "$(ct ip -o link show | awk -F': ' '{ print $2 }')" lo
is "benchd started at boot (enabled by the postinst)" "$(ct systemctl is-active benchd 2>&1)" active

check "systemctl disable --now benchd" ct systemctl disable --now benchd
is "benchd is stopped" "$(ct systemctl is-active benchd 2>&1)" inactive
is "benchd is disabled (no multi-user.target.wants link)" \
    "$(ct systemctl is-enabled benchd 2>&1) $(ct test -e /etc/systemd/system/multi-user.target.wants/benchd.service && echo link)" \
    "disabled "
check "systemctl enable --now benchd" ct systemctl enable --now benchd
benchd_active() { [ "$(ct systemctl is-active benchd 2>/dev/null)" = active ]; }
wait_until 60 benchd_active
is "benchd is active and enabled" "$(ct systemctl is-active benchd 2>&1) $(ct systemctl is-enabled benchd 2>&1)" \
    "active enabled"

show=$(ct systemctl show benchd -p MainPID,ActiveState,SubState,FragmentPath,Type,NRestarts 2>&1)
prop() { sed -n "s/^$1=//p" <<<"$show"; }
is "it runs from the packaged unit (FragmentPath)" "$(prop FragmentPath)" /lib/systemd/system/benchd.service
is "ActiveState, SubState, Type, NRestarts" "$(prop ActiveState) $(prop SubState) $(prop Type) $(prop NRestarts)" \
    "active running notify 0"
main=$(prop MainPID)
is "its MainPID ($main) is /usr/bin/benchd" "$(ct readlink "/proc/${main:-0}/exe" 2>&1)" /usr/bin/benchd
is "the sandbox holds: no new privileges, seccomp filter" \
    "$(ct grep -E '^(NoNewPrivs|Seccomp):' "/proc/${main:-0}/status" 2>&1 | tr -s '\t ' ' ' | tr '\n' ' ')" \
    "NoNewPrivs: 1 Seccomp: 2 "
mounts=$(ct cat "/proc/${main:-0}/mountinfo" 2>&1)
is "the sandbox holds: /usr and /etc read-only (ProtectSystem=full)" \
    "$(awk '$5 == "/usr" || $5 == "/etc" { split($6, o, ","); print $5, o[1] }' <<<"$mounts" | sort -u | tr '\n' ' ')" \
    "/etc ro /usr ro "
like "the sandbox holds: a private /tmp (PrivateTmp)" "$(awk '$5 == "/tmp" { print $4 }' <<<"$mounts")" \
    'systemd-private-.*-benchd\.service-'
is "its state directory /var/lib/benchd (0700) holds its token" \
    "$(ct stat -c '%a %U' /var/lib/benchd 2>&1) $(ct test -s /var/lib/benchd/token && echo token)" "700 root token"
like "it listens on 127.0.0.1:9410 (the packaged configuration)" "$(ct ss -Hltn 'sport = :9410' 2>&1)" \
    '127\.0\.0\.1:9410 '
health=$(ct curl -s -m 5 http://127.0.0.1:9410/v1/health 2>&1)
like "GET /v1/health in the container answers ok, version $version" "$health" \
    "\"status\": *\"ok\".*\"version\": *\"$version\""
like "its journal: serving on 127.0.0.1:9410" "$(ct journalctl -u benchd -b --no-pager -o cat 2>&1)" \
    'serving on 127\.0\.0\.1:9410'

check "systemctl stop benchd" ct systemctl stop benchd
show=$(ct systemctl show benchd -p MainPID,ActiveState,Result 2>&1)
is "benchd stopped cleanly (MainPID, ActiveState, Result)" "$(prop MainPID) $(prop ActiveState) $(prop Result)" \
    "0 inactive success"
check_fails "GET /v1/health no longer answers, benchd's process is gone" \
    ct sh -c "curl -s -m 5 http://127.0.0.1:9410/v1/health || test -e /proc/${main:-0}"

# ---- power off, nothing left ----
ct systemctl poweroff >/dev/null 2>&1
deadline=$((SECONDS + 60))
until nspawn_exited || [ "$SECONDS" -ge "$deadline" ]; do sleep 0.1; done
if nspawn_exited; then
    wait "$npid"
    rc=$?
    npid=""
else
    rc="still running after 60 s"
fi
is "systemctl poweroff: the container shuts down, systemd-nspawn exits 0" "$rc" 0
[ "$rc" = 0 ] || tail -5 "$tmp/nspawn.log" | sed 's/^/#   nspawn: /'
left=""
for p in /proc/[0-9]*; do
    [ "$(readlink "$p/ns/pid" 2>/dev/null)" = "$ct_pidns" ] && left+=" ${p#/proc/}"
done
for d in "${cgs[@]}"; do
    [ -z "$(find "$d" -name cgroup.procs -exec cat {} + 2>/dev/null)" ] || left+=" (processes in $d)"
done
pgrep -f "systemd-nspawn .*-M $machine" >/dev/null && left+=" systemd-nspawn"
is "no process of the container is left" "$left" ""
is "no mount is left under $tmp" "$(awk -v t="$tmp/" 'index($5, t) == 1' /proc/self/mountinfo)" ""
for d in "${cgs[@]}"; do find "$d" -depth -type d -exec rmdir {} \; ; done
left=""
for d in "${cgs[@]}"; do [ -e "$d" ] && left+=" $d"; done
is "its cgroups are removed" "$left" ""
dev_null_ok
done_testing

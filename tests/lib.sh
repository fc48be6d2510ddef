# tests/lib.sh: TAP helpers for the shell tests (source it).
#
#   check "description" command args...     ok when the command succeeds
#   check_fails "description" command...    ok when it fails
#   is "description" GOT WANT
#   like "description" TEXT PATTERN         grep -E pattern
#   skip_all "reason"
#   done_testing
# Environment (from make check): srcdir, top_builddir.
set -u
: "${srcdir:=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"
: "${top_builddir:=$PWD}"
BENCHCTL="$top_builddir/benchctl"
export BENCHD_SYSTEMS="$srcdir/systems"
t_n=0
t_failed=0

_t_result() {
    local status=$1; shift
    t_n=$((t_n + 1))
    if [ "$status" -eq 0 ]; then
        echo "ok $t_n - $*"
    else
        echo "not ok $t_n - $*"
        t_failed=$((t_failed + 1))
    fi
}

check() {
    local desc=$1; shift
    local out
    if out=$("$@" 2>&1); then
        _t_result 0 "$desc"
    else
        _t_result 1 "$desc"
        printf '%s\n' "$out" | head -20 | sed 's/^/#   /'
    fi
}

check_fails() {
    local desc=$1; shift
    if "$@" >/dev/null 2>&1; then
        _t_result 1 "$desc (command succeeded)"
    else
        _t_result 0 "$desc"
    fi
}

is() {
    if [ "$2" = "$3" ]; then
        _t_result 0 "$1"
    else
        _t_result 1 "$1"
        printf '#   got:  %s\n#   want: %s\n' "$2" "$3"
    fi
}

like() {
    if printf '%s\n' "$2" | grep -Eq -- "$3"; then
        _t_result 0 "$1"
    else
        _t_result 1 "$1"
        printf '%s\n' "$2" | head -10 | sed 's/^/#   /'
        printf '#   does not match: %s\n' "$3"
    fi
}

skip_all() {
    echo "1..0 # SKIP $*"
    exit 0
}

done_testing() {
    echo "1..$t_n"
    [ "$t_failed" -eq 0 ]
}

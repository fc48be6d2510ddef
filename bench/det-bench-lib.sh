# bench/det-bench-lib.sh: what nms.sh and rpn-proposals.sh share (sourced).
# shellcheck shell=bash disable=SC2154  # src, build, rounds, reps, py: set by the caller
# They set src, build, rounds, reps, py; this adds:
#   med              the median of the numbers on stdin
#   header WHAT      the versions, the CPU and the rounds, then the table head
#   ratio_row LABEL THREADS THEIRS OURS   one table row (seconds in, ms out)
med() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
header() {
        echo "torch $("$py" -c 'import torch; print(torch.__version__)')," \
                "torchvision $("$py" -c 'import torchvision; print(torchvision.__version__)')," \
                "$(lscpu | sed -n 's/^Model name: *//p'), median of $rounds alternating rounds of $reps $1"
        printf '%-44s %8s %12s %10s %8s\n' "" threads "torchvision" ours ratio
}
ratio_row() {
        printf '%-44s %8d %9.3f ms %7.3f ms %8.2f\n' "$1" "$2" "$(echo "$3 * 1000" | bc -l)" \
                "$(echo "$4 * 1000" | bc -l)" "$(echo "$3 / $4" | bc -l)"
}

# Sourced by the bench scripts from the repository root: installs and builds
# pfsim, sets $bin (the binary) and $work (a scratch folder removed on exit),
# prints the machine, and defines `median` (of the numbers on stdin) and
# `measure COLD CMD...` (median wall seconds of $runs runs of CMD with
# PFSIM_CACHE_DIR=$cache, emptied before each when COLD is 1).
./setup.sh
bazel build //:pfsim >/dev/null 2>&1
bin=$(bazel info bazel-bin 2>/dev/null)/cli/pfsim
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs), $(free -g | awk '/Mem/ {print $2}') GiB"
median() { sort -n | awk '{ v[NR] = $0 } END { print v[int((NR + 1) / 2)] }'; }
secs() { /usr/bin/time -f %e "$@" 2>&1 >/dev/null | tail -1; }
measure() {
    local cold=$1; shift
    for _ in $(seq "$runs"); do
        [ "$cold" = 1 ] && rm -rf "$cache"
        PFSIM_CACHE_DIR=$cache secs "$@"
    done | median
}

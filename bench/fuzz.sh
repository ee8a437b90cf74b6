#!/bin/bash
# Runs every libFuzzer target (fuzz/BUILD) for SECONDS each (default 60) on a
# clang-14 build with AddressSanitizer and UBSan, from its seed corpus
# (fuzz/corpus/NAME, copied: the repo's seeds are not changed). A finding
# (crash, leak, timeout, uncaught exception, sanitizer report) stops that
# target, is kept as fuzz-findings/NAME/crash-*, and the script exits 1; turn
# each into a regression input (fuzz/regressions/NAME/) with its fix.
# The build has its own Bazel output base (it changes the C++ toolchain), and
# its server is stopped at the end. The targets run $FUZZ_JOBS at a time
# (default: the machine's cores), each on one core; their lines are printed in
# fuzz/BUILD's order.
#   bench/fuzz.sh [SECONDS] [TARGET...]
set -u -o pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=($(sed -n 's/^ *name = "\(.*_fuzz\)",/\1/p' fuzz/BUILD))
fi
base=${PFSIM_FUZZ_OUTPUT_BASE:-$HOME/.cache/pfsim-fuzz-bazel}
bz() { bazel --output_base="$base" "$@"; }
trap 'bz shutdown >/dev/null 2>&1 || true' EXIT
labels=()
for t in "${targets[@]}"; do labels+=("//fuzz:$t"); done
echo "fuzz.sh: building ${#targets[@]} targets with clang-14 (libFuzzer, ASan, UBSan)" >&2
bz build --config=fuzz --symlink_prefix=/ "${labels[@]}" >&2 || { echo "fuzz.sh: the fuzz build failed" >&2; exit 2; }
bin=$(bz info --config=fuzz bazel-bin 2>/dev/null)
work=$(mktemp -d)
trap 'rm -rf "$work"; bz shutdown >/dev/null 2>&1 || true' EXIT
jobs=${FUZZ_JOBS:-$(nproc)}
# Fuzzes target $1; its verdict line goes to $work/$1.verdict, exit 1 on a finding.
fuzz_one() {
    local t=$1 corpus="$work/$1" log="$work/$1.log" rc runs
    mkdir -p "$corpus" "fuzz-findings/$t"
    cp -r "fuzz/corpus/$t/." "$corpus/" 2>/dev/null || true
    [ -d "fuzz/regressions/$t" ] && cp -r "fuzz/regressions/$t/." "$corpus/"
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 ASAN_OPTIONS=detect_leaks=1 TMPDIR="$work" \
        "$bin/fuzz/$t" "$corpus" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
        -artifact_prefix="fuzz-findings/$t/" -print_final_stats=1 > "$log" 2>&1
    rc=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    if [ "$rc" -eq 0 ]; then
        echo "$t: ${runs:-?} inputs in ${seconds} s, no finding" > "$work/$t.verdict"
        rmdir "fuzz-findings/$t" 2>/dev/null || true
        return 0
    fi
    {
        echo "$t: FINDING (exit $rc) after ${runs:-?} inputs; artifacts in fuzz-findings/$t/:"
        grep -E "ERROR|SUMMARY|uncaught|deadly|Test unit written" "$log" | head -8 | sed 's/^/    /'
    } > "$work/$t.verdict"
    return 1
}
pids=()
for t in "${targets[@]}"; do
    while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
    fuzz_one "$t" &
    pids+=($!)
done
failed=0
for i in "${!targets[@]}"; do
    wait "${pids[$i]}" || failed=1
    cat "$work/${targets[$i]}.verdict"
done
rmdir fuzz-findings 2>/dev/null || true
exit $failed

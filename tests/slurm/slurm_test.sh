#!/bin/bash
# pfsim sweep --slurm on a real single-node Slurm cluster (tools/slurm_cluster.sh):
# submit, wait and collect, compared with a local sweep of the same grid; an
# array cancelled midway and resumed; the bad inputs refused before anything is
# submitted. The cluster's daemons are stopped by process id whatever happens.
# Never skipped: a cluster that cannot start fails the test with its logs.
set -u -o pipefail
pfsim=$(realpath "$1")
cluster_sh=$(realpath "$2")
work=$(mktemp -d /tmp/pfsim-slurm-test.XXXXXX)  # short: munge's socket path must fit a sockaddr
failures=0

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

finish() {
    "$cluster_sh" stop "$work/cluster"
    for d in munged slurmctld slurmd; do
        [ -f "$work/cluster/$d.started" ] && { echo "FAIL: $d still recorded as running"; failures=$((failures + 1)); }
    done
    rm -rf "$work"
    echo "$failures failures"
    [ "$failures" -eq 0 ]
}
trap 'finish; exit $?' EXIT

expect_status() {  # expected, what, actual
    [ "$3" -eq "$1" ] || fail "$2: exit $3, expected $1"
}
expect_in() {  # needle, file, what
    grep -qF -- "$1" "$2" || { fail "$3: '$1' not in:"; cat "$2"; }
}
jobs_known() { squeue -h -t all -o %i | sort -u | wc -l; }

start_output=$("$cluster_sh" start "$work/cluster") || {
    fail "the cluster did not start (its logs are above)"
    exit 1
}
eval "$start_output"  # export SLURM_CONF=...
echo "cluster up: $SLURM_CONF"
cd "$work" || exit 1

grid=(--grid arg.bytes=4KiB,1MiB,4MiB --grid prefetch.request_bytes=1MiB,16MiB)
"$pfsim" sweep prefetch_wait "${grid[@]}" --jobs 2 --csv local.csv 2>/dev/null
expect_status 0 "local sweep" $?

echo '== 1. submit, wait, collect: the rows of the local sweep'
"$pfsim" sweep prefetch_wait "${grid[@]}" --slurm --out run1 --chunk 2 --partition debug \
    --slurm-opt=--time=10 --wait --csv slurm.csv 2>wait.err
expect_status 0 "sweep --slurm --wait" $?
cmp -s local.csv slurm.csv || { fail "the Slurm CSV differs from the local one"; diff local.csv slurm.csv; }
expect_in "6 of 6 points submitted as array job" wait.err "submission line"
expect_in "points done; array" wait.err "progress line"
[ "$(ls run1/slurm/*.log | wc -l)" -eq 3 ] || fail "6 points in chunks of 2 should be 3 array tasks: $(ls run1/slurm)"
"$pfsim" sweep --collect run1 >collected.csv 2>/dev/null
expect_status 0 "collect" $?
cmp -s local.csv collected.csv || fail "collect differs from the local CSV"

echo '== 2. without --wait: the job id alone on stdout; collect'
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB,64KiB --slurm --out run2 >job.txt 2>submit.err
expect_status 0 "sweep --slurm" $?
grep -qxE '[0-9]+' job.txt || fail "stdout should be the job id alone, was: $(cat job.txt)"
job=$(cat job.txt)
for _ in $(seq 300); do [ -z "$(squeue -h -j "$job" -o %i 2>/dev/null)" ] && break; sleep 0.2; done
"$pfsim" sweep --collect run2 --csv run2.csv 2>/dev/null
expect_status 0 "collect run2" $?
[ "$(wc -l <run2.csv)" -eq 3 ] || fail "run2.csv should have a header and 2 rows"

echo '== 3. an array cancelled midway, then resumed: only the missing points run again'
grid3=(--grid arg.bytes=4KiB,16KiB,64KiB,256KiB,1MiB,4MiB)
"$pfsim" sweep prefetch_wait "${grid3[@]}" --jobs 2 --csv local3.csv 2>/dev/null
"$pfsim" sweep prefetch_wait "${grid3[@]}" --slurm --out run3 --slurm-opt=--cpus-per-task=2 >job3.txt 2>/dev/null
expect_status 0 "submit run3" $?
job3=$(cat job3.txt)
for _ in $(seq 600); do [ -n "$(ls run3/points/ 2>/dev/null)" ] && break; sleep 0.1; done
scancel "$job3"
for _ in $(seq 300); do [ -z "$(squeue -h -j "$job3" -o %i 2>/dev/null)" ] && break; sleep 0.2; done
done_before=$(ls run3/points | grep -c '^[0-9]*\.json$')
echo "cancelled with $done_before of 6 points done"
if [ "$done_before" -lt 1 ] || [ "$done_before" -ge 6 ]; then
    fail "the cancel should have left some points done and some not: $done_before of 6 done"
fi
"$pfsim" sweep --collect run3 >partial.csv 2>partial.err
expect_status 1 "collect of a cancelled array" $?
expect_in "points not run: " partial.err "missing points listed"
[ "$(grep -c ',not run$' partial.csv)" -eq $((6 - done_before)) ] || fail "partial.csv should mark $((6 - done_before)) points not run"
kept=$(cd run3/points && stat -c '%n %i %Y' *.json)  # a point run again would be a new file
"$pfsim" sweep prefetch_wait "${grid3[@]}" --slurm --out run3 --slurm-opt=--cpus-per-task=2 --wait --csv resumed.csv 2>resume.err
expect_status 0 "resume" $?
expect_in "$((6 - done_before)) of 6 points submitted" resume.err "only the missing points resubmitted"
cmp -s local3.csv resumed.csv || { fail "the resumed CSV differs from the local one"; diff local3.csv resumed.csv; }
while read -r name inode mtime; do
    [ "$(stat -c '%i %Y' "run3/points/$name")" = "$inode $mtime" ] || fail "point $name was run again"
done <<<"$kept"
[ -z "$(ls run3/points | grep -v '^[0-9]*\.json$')" ] || fail "left-overs in run3/points: $(ls run3/points)"
"$pfsim" sweep prefetch_wait "${grid3[@]}" --slurm --out run3 2>again.err
expect_status 0 "a third submission of a finished folder" $?
expect_in "all 6 points are done" again.err "nothing resubmitted when all is done"

echo '== 4. bad input: exit 2 with the reason, no job submitted'
before=$(jobs_known)
PATH=/nonexistent "$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out bad1 2>bad.err
expect_status 2 "no sbatch on PATH" $?
expect_in "no sbatch on PATH" bad.err "no sbatch"
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out bad2 --partition nosuch 2>bad.err
expect_status 2 "unknown partition" $?
expect_in "--partition nosuch: no such partition (the cluster has: debug)" bad.err "partition"
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out /proc/pfsim-sweep 2>bad.err
expect_status 2 "unwritable DIR" $?
expect_in "/proc/pfsim-sweep: cannot write" bad.err "unwritable DIR"
"$pfsim" sweep prefetch_wait --grid arg.bytes=8KiB --slurm --out run1 2>bad.err
expect_status 2 "DIR of another grid" $?
expect_in "run1 holds another batch" bad.err "another grid"
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out bad3 --slurm-opt=--no-such-sbatch-option 2>bad.err
expect_status 2 "sbatch refuses" $?
expect_in "sbatch refused the array" bad.err "sbatch's refusal"
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out bad4 --chunk 0 2>bad.err
expect_status 2 "--chunk 0" $?
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB --slurm 2>bad.err
expect_status 2 "--slurm without --out" $?
[ "$(jobs_known)" -eq "$before" ] || fail "a bad input submitted a job: $(squeue -h -t all)"
[ ! -e bad3/slurm/submit-0.json ] || fail "a refused submission left its files"

echo '== 5. check over several kernels and cases on the cluster: the local table'
"$pfsim" check prefetch_demo no_gain --junit local.xml >check_local.txt 2>/dev/null
expect_status 0 "local check" $?
"$pfsim" check prefetch_demo no_gain --slurm --out check1 --wait --junit slurm.xml >check_slurm.txt 2>check.err
expect_status 0 "check --slurm --wait" $?
cmp -s check_local.txt check_slurm.txt || { fail "the Slurm check table differs"; diff check_local.txt check_slurm.txt; }
cmp -s local.xml slurm.xml || fail "the Slurm check's junit differs"
"$pfsim" check --collect check1 --json >check.json 2>/dev/null
expect_status 0 "check --collect --json" $?
grep -q '"passed": 2' check.json || fail "check --collect --json: $(head -c 300 check.json)"
"$pfsim" check prefetch_demo --advise --slurm --out check2 2>bad.err
expect_status 2 "check --advise --slurm" $?

echo '== 6. a second array on a folder whose array still waits is refused'
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB,8KiB,16KiB --slurm --out run4 --slurm-opt=--begin=now+600 >/dev/null 2>&1
"$pfsim" sweep prefetch_wait --grid arg.bytes=4KiB,8KiB,16KiB --slurm --out run4 2>bad.err
expect_status 2 "a folder whose array still waits" $?
expect_in "is still pending or running" bad.err "second array refused"
scancel --name=pfsim-sweep

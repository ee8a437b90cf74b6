#!/bin/bash
# A single-node Slurm cluster in one folder, for trying `pfsim sweep --slurm`
# and for its tests. Needs root (slurmd runs jobs as their user) and Debian's
# slurmctld, slurmd, slurm-client and munge (./setup.sh installs them).
#
#   tools/slurm_cluster.sh start DIR   generates a munge key and a slurm.conf in
#                                      DIR, starts munged, slurmctld and slurmd on
#                                      free ports, waits until the node is idle;
#                                      prints `export SLURM_CONF=DIR/slurm.conf`
#   tools/slurm_cluster.sh stop DIR    stops the daemons it started, by process id
#   tools/slurm_cluster.sh logs DIR    prints the daemons' logs
#
# Nothing outside DIR is touched: clients find the cluster through SLURM_CONF,
# and the daemons' munge socket, state, spool, pid and log files are all in DIR.
# The node is named pfsim and has every CPU of this machine; the one partition,
# `debug`, is the default.
set -u
export PATH="$PATH:/usr/sbin:/sbin"  # the daemons, off a user's (or Bazel's) PATH

usage() { echo "usage: $0 start|stop|logs DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
action=$1
dir=$2

logs() {
    for f in munged.log slurmctld.log slurmd.log; do
        [ -f "$dir/$f" ] || continue
        echo "==== $dir/$f (last 40 lines)" >&2
        tail -n 40 "$dir/$f" >&2
    done
}

stop() {
    # slurmd first, so no job step is left behind, then the controller, then munge.
    for d in slurmd slurmctld munged; do
        local pidfile="$dir/$d.started"
        [ -f "$pidfile" ] || continue
        local pid
        pid=$(cat "$pidfile")
        if kill -0 "$pid" 2>/dev/null; then
            kill -TERM "$pid" 2>/dev/null
            for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
            kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
        fi
        rm -f "$pidfile"
    done
}

fail() {
    echo "slurm_cluster.sh: $*" >&2
    logs
    stop
    exit 1
}

# N free TCP ports on loopback, one per line.
free_ports() {
    python3 -c '
import socket, sys
socks = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])' "$1"
}

start() {
    for tool in munged slurmctld slurmd sinfo; do
        command -v "$tool" >/dev/null || fail "$tool is not installed (run ./setup.sh)"
    done
    [ "$(id -u)" -eq 0 ] || fail "must run as root: slurmd starts jobs as their user"
    mkdir -p "$dir" || fail "cannot create $dir"
    dir=$(cd "$dir" && pwd)
    [ -f "$dir/slurmctld.started" ] && fail "a cluster is already started in $dir (stop it first)"
    mkdir -p "$dir/state" "$dir/spool" "$dir/munge"
    chmod 0700 "$dir/munge"

    dd if=/dev/urandom of="$dir/munge/munge.key" bs=1024 count=1 status=none || fail "cannot write the munge key"
    chmod 0400 "$dir/munge/munge.key"
    munged --foreground --force --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
        --pid-file="$dir/munge/munged.pid" --seed-file="$dir/munge/munged.seed" \
        --log-file="$dir/munged.log" >/dev/null 2>&1 &
    echo $! >"$dir/munged.started"
    for _ in $(seq 50); do [ -S "$dir/munge/munge.socket" ] && break; sleep 0.1; done
    [ -S "$dir/munge/munge.socket" ] || fail "munged did not open its socket"

    read -r -d '' ctld_port slurmd_port < <(free_ports 2)
    local cpus mem
    cpus=$(nproc)
    mem=$(($(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 / 2))
    cat >"$dir/slurm.conf" <<EOF
# Written by tools/slurm_cluster.sh: a single-node cluster in $dir.
ClusterName=pfsim
SlurmctldHost=$(hostname)(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.socket
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
MpiDefault=none
ReturnToService=2
SchedulerType=sched/builtin
MinJobAge=600
SlurmctldTimeout=30
SlurmdTimeout=30
NodeName=pfsim NodeHostname=$(hostname) NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=debug Nodes=pfsim Default=YES MaxTime=INFINITE State=UP
EOF
    export SLURM_CONF="$dir/slurm.conf"
    slurmctld -D -i -f "$dir/slurm.conf" >>"$dir/slurmctld.log" 2>&1 &
    echo $! >"$dir/slurmctld.started"
    slurmd -D -N pfsim -f "$dir/slurm.conf" >>"$dir/slurmd.log" 2>&1 &
    echo $! >"$dir/slurmd.started"

    for _ in $(seq 300); do
        state=$(sinfo -h -n pfsim -o %T 2>/dev/null)
        [ "$state" = idle ] && break
        for d in munged slurmctld slurmd; do
            kill -0 "$(cat "$dir/$d.started")" 2>/dev/null || fail "$d exited while starting"
        done
        sleep 0.1
    done
    [ "$state" = idle ] || fail "the node did not become idle in 30 s (state: ${state:-unknown})"
    echo "export SLURM_CONF=$dir/slurm.conf"
}

case "$action" in
    start) start ;;
    stop) stop ;;
    logs) logs ;;
    *) usage ;;
esac

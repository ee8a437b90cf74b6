#!/usr/bin/python3
"""Usage: cpu_time.py COMMAND [ARG]... -- runs COMMAND and prints, on stderr, the
user and system CPU seconds of it and every process it started, orphans
included (this process is their subreaper and reaps them all), and the wall time:
"cpu_time: user U s, sys S s, wall W s: COMMAND". Exits with COMMAND's status."""
import ctypes, os, subprocess, sys, time

PR_SET_CHILD_SUBREAPER = 36
if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
    sys.exit("cpu_time.py: cannot become a subreaper")
start = time.monotonic()
rc = subprocess.call(sys.argv[1:])
while True:  # the orphans that are still running, and the ones that ended
    try:
        os.wait()
    except ChildProcessError:
        break
used = os.times()
print(f"cpu_time: user {used.children_user:.1f} s, sys {used.children_system:.1f} s, "
      f"wall {time.monotonic() - start:.1f} s: {' '.join(sys.argv[1:])}", file=sys.stderr)
sys.exit(rc)

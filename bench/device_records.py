#!/usr/bin/env python3
"""Benchmark and check (#49): a device run that asks for no task records (Worker.run(tasks=False),
what the scene harness asks) must not grow the device process's memory with its task count.
Runs bench/cases/graph10k (tensors 24 KiB whatever the count) through pfsim.Worker, prefetch off,
at 30,000 and 60,000 tasks, with the records and without, each on a fresh device process under
GNU time; prints the device's peak RSS and CPU for each and the peak RSS each task adds from
30,000 to 60,000 tasks. Exits 1 when that is above MAX_KIB_PER_TASK (default 0.05) without the
records (0.01 KiB at e037f1a; 2.67 KiB at 36ef61e, whose device kept every record whatever
the client asked).
usage: PYTHONPATH=$(pfsim python-path) python3 bench/device_records.py PFSIM [MAX_KIB_PER_TASK]"""
import os
import sys
import tempfile

import numpy as np

import pfsim

here = os.path.dirname(os.path.abspath(__file__))
binary = os.path.abspath(sys.argv[1])
limit = float(sys.argv[2]) if len(sys.argv) > 2 else 0.05
case = os.path.join(here, "cases", "graph10k")
callable_ = pfsim.Callable.from_dict({
    "orchestration": {"source": "kernels/orchestration/graph10k_orch.cpp"},
    "incores": [{"func_id": 0, "source": "../../../cases/vector_chain/kernels/aiv/kernel_add.cpp", "core_type": "aiv"}],
}, case)

with tempfile.TemporaryDirectory() as work:
    wrapper = os.path.join(work, "device.sh")
    with open(wrapper, "w") as f:  # the device process under GNU time: its peak RSS (KiB) and CPU (s)
        f.write(f'#!/bin/sh\nexec /usr/bin/time -f "%M %U %S" -o "{work}/time" "{binary}" "$@"\n')
    os.chmod(wrapper, 0o755)

    def device_run(tasks: int, records: bool):
        with pfsim.Worker(binary=wrapper) as worker:
            x, y, out = (np.full(2048, v, dtype=np.float32) for v in (1, 2, 0))
            result = worker.run(worker.register(callable_), [x, y, out, tasks], prefetch=False, tasks=records)
        assert (out == 3).all() and result.task_count == tasks, result.task_count
        with open(os.path.join(work, "time")) as f:
            rss, user, sys_s = f.read().split()[-3:]
        print(f"graph10k tasks={tasks} records={'yes' if records else 'no'}: device peak RSS {int(rss) / 1024:.0f} MiB, "
              f"CPU {float(user) + float(sys_s):.2f} s (user {user}, sys {sys_s})", flush=True)
        return int(rss)

    device_run(100, True)  # compiles the sources outside the figures
    rss = {(n, r): device_run(n, r) for r in (True, False) for n in (30000, 60000)}
    for r in (True, False):
        per_task = (rss[(60000, r)] - rss[(30000, r)]) / 30000
        print(f"device peak RSS per task, 30000 to 60000 tasks, records {'yes' if r else 'no'}: {per_task:.2f} KiB")
    past = (rss[(60000, False)] - rss[(30000, False)]) / 30000
    print(f"without the records: {past:.2f} KiB per task (limit {limit} KiB): {'ok' if past <= limit else 'ABOVE the limit'}")
    sys.exit(0 if past <= limit else 1)

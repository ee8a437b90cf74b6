"""A run's Chrome trace draws one flow arrow per dependency between the tasks'
slices, each with its own id: a task with more than 64 dependencies (simpler
allows 64 inline and more from its pool) keeps every arrow."""

import json
import os

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
FLOW_BASE = 1 << 32  # the tasks' flows, apart from the prefetch flows


def dependency_flows(tmp_path, n):
    """The flow ids of the run's dependency arrows ("s" events), with n producers."""
    with pfsim.Worker() as worker:
        handle = worker.register(pfsim.Callable.from_dict({
            "orchestration": {"source": "kernels/orchestration/ring_window_orch.cpp"},
            "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
        }, HERE))
        out = torch.zeros((n + 1) * 8, dtype=torch.int64)
        r = worker.run(handle, [out, 4, n, 1], trace=str(tmp_path / f"t{n}.json"))
    events = json.load(open(r.trace))["traceEvents"]
    return [e["id"] for e in events if e.get("ph") == "s" and e["id"] >= FLOW_BASE]


@pytest.mark.parametrize("n", [64, 100])
def test_each_dependency_has_its_own_flow(tmp_path, n):
    ids = dependency_flows(tmp_path, n)
    assert len(ids) == n and len(set(ids)) == n, sorted(ids)
    # The ids traces have always had (task * 64 + producer % 64) where they
    # were unique: a graph of at most 64 dependencies a task traces as before.
    old = [FLOW_BASE + n * 64 + d % 64 for d in range(n)]
    assert sorted(set(ids) & set(old)) == sorted(set(old))
    # Negative control: those ids alone would merge the arrows past 64.
    assert (len(set(old)) == n) == (n <= 64)

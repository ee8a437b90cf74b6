"""A kernel's pointer loads from GM take the core's direct path to the L2
(Core::attach_direct_reads, model/common/scalar_read_target.h) and read and
time exactly as through the L2's cached socket (the kernel ABI's
scalar_read()): the same values, the same simulated times, the same trace,
with many cores contending for the same lines and their MTE2 loads of those
lines through the socket between."""

import os

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS = 16
ELEMENTS = 2048  # 8 lines of int16
PASSES = 2
DIRECT, SOCKET, DIRECT_PLUS_ONE_LOAD = 0, 1, 2


@pytest.fixture(scope="module")
def scalar_reads(tmp_path_factory):
    callable_ = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/scalar_reads_orch.cpp"},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_scalar_reads.cpp", "core_type": "aiv"}],
    }, HERE)
    traces = tmp_path_factory.mktemp("scalar_reads")
    data = (torch.arange(ELEMENTS, dtype=torch.int32) * 37 % 1001 - 500).to(torch.int16)

    def run(how):
        """Each block's line (sum, loads, last tick), the run's task times with
        each block's span and its trace; each run the first of its own worker."""
        out = torch.zeros(BLOCKS * 8, dtype=torch.int64)
        trace = str(traces / f"trace_{how}.json")
        with pfsim.Worker() as worker:
            r = worker.run(worker.register(callable_), [data, out, BLOCKS, ELEMENTS, PASSES, how], trace=trace,
                           spans=True)
        assert r.error is None, r.error
        with open(trace) as f:
            text = f.read()
        return out.reshape(BLOCKS, 8)[:, :3].tolist(), [(t.start_ns, t.end_ns, t.spans) for t in r.tasks], r.sim_time_ns, text
    return run, data


def test_pointer_loads_read_and_time_as_through_the_cached_socket(scalar_reads):
    run, data = scalar_reads
    lines, tasks, sim_ns, trace = run(DIRECT)
    socket_lines, socket_tasks, socket_sim_ns, socket_trace = run(SOCKET)
    values = data.to(torch.int64)
    for b, (total, loads, _) in enumerate(lines):
        j = (torch.arange(ELEMENTS) * 7 + b * 64) % ELEMENTS
        assert total == PASSES * int((values * values[j]).sum())  # the loads read the input's values
        assert loads == 2 * ELEMENTS * PASSES
    assert len({tick for _, _, tick in lines}) > 1  # the blocks contend: they end apart
    assert lines == socket_lines
    assert (tasks, sim_ns) == (socket_tasks, socket_sim_ns)
    assert trace == socket_trace


def test_a_kernel_that_reads_differently_is_told_apart(scalar_reads):
    # Negative control: one more load every 512 changes each block's sum and
    # its loads, and the blocks end later.
    run, _ = scalar_reads
    lines, tasks, sim_ns, trace = run(DIRECT)
    other_lines, other_tasks, other_sim_ns, other_trace = run(DIRECT_PLUS_ONE_LOAD)
    assert lines != other_lines
    assert tasks != other_tasks and sim_ns != other_sim_ns and trace != other_trace

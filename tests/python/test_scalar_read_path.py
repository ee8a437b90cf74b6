"""A kernel's pointer loads from GM take the core's direct path to the L2
(Core::attach_direct_reads, model/common/scalar_read_target.h) and read and
time exactly as through the L2's cached socket (the kernel ABI's
scalar_read()): the same values, the same simulated times, the same trace,
with many cores contending for the same lines and their MTE2 loads of those
lines through the socket between; with the core's scalar data cache
(core.dcache, the default) and without it. Without it, the loads time as
they did before the cache (#44), to the picosecond."""

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

    def run(how, **settings):
        """Each block's line (sum, loads, last tick), the run's task times with
        each block's span and its trace; each run the first of its own worker."""
        out = torch.zeros(BLOCKS * 8, dtype=torch.int64)
        trace = str(traces / f"trace_{how}_{len(settings)}.json")
        with pfsim.Worker(set=settings) as worker:
            r = worker.run(worker.register(callable_), [data, out, BLOCKS, ELEMENTS, PASSES, how], trace=trace,
                           spans=True)
        assert r.error is None, r.error
        with open(trace) as f:
            text = f.read()
        run.summaries[(how, len(settings))] = r.summary
        return out.reshape(BLOCKS, 8)[:, :3].tolist(), [(t.start_ns, t.end_ns, t.spans) for t in r.tasks], r.sim_time_ns, text
    run.summaries = {}
    return run, data


OFF = {"core.dcache": "false"}


@pytest.mark.parametrize("settings", [{}, OFF], ids=["dcache", "no_dcache"])
def test_pointer_loads_read_and_time_as_through_the_cached_socket(scalar_reads, settings):
    run, data = scalar_reads
    lines, tasks, sim_ns, trace = run(DIRECT, **settings)
    socket_lines, socket_tasks, socket_sim_ns, socket_trace = run(SOCKET, **settings)
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


def test_without_the_data_cache_the_loads_time_as_before_it(scalar_reads):
    # Measured at ce23295 (before core.dcache) with this kernel and these
    # arguments: the graph's time, the cores' scalar busy ps, the L2's counts
    # and each block's last system-counter read (its trace was byte for byte
    # the one core.dcache = false writes now).
    run, _ = scalar_reads
    lines, tasks, sim_ns, _ = run(DIRECT, **OFF)
    summary = run.summaries[(DIRECT, 1)]
    before = (3194000.0, 49088273855, (132390, 10, 132096),
              [159205, 151118, 141862, 151345, 146663, 151506, 159362, 159654, 159652, 156515, 154661, 148536,
               152059, 153256, 153611, 156581])
    l2 = summary["l2"]
    assert (sim_ns, summary["cores"]["scalar"], (l2["hits"], l2["misses"], l2["read_lines"]),
            [tick for _, _, tick in lines]) == before
    assert [(start, end) for start, end, _ in tasks] == [(1500.0, 3193614.765)]
    # Negative control: with the cache the same loads take a fraction of the time.
    on_lines, _, on_sim_ns, _ = run(DIRECT)
    assert on_sim_ns < sim_ns / 10 and [t for _, _, t in on_lines] != [t for _, _, t in lines]

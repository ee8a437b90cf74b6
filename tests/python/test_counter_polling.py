"""A kernel polling the system counter (get_sys_cnt) takes its reads' fast path
(pfsim::CounterFastPath) and times exactly as when every read takes the full
path: the same values read, the same simulated times, the same trace."""

import os

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
BLOCKS = 48  # every vector core of the die: 48 polling loops synchronising with SystemC
FAST, FULL, FULL_PLUS_ONE_OP = 0, 1, 2


@pytest.fixture(scope="module")
def poll(tmp_path_factory):
    callable_ = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/poll_orch.cpp"},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_poll.cpp", "core_type": "aiv"}],
    }, HERE)
    traces = tmp_path_factory.mktemp("poll")

    def run(how, store_every=0, hold=300):
        """Each block's line (first tick, last tick, reads, stores), the run's
        task times with each block's span (its pipes' busy time too) and its
        trace; each run the first of its own worker (a worker's die keeps its
        clock from one run to the next)."""
        out = torch.zeros(BLOCKS * 8, dtype=torch.int64)
        trace = str(traces / f"trace_{how}_{store_every}.json")
        with pfsim.Worker() as worker:
            r = worker.run(worker.register(callable_), [out, BLOCKS, hold, how, store_every], trace=trace, spans=True)
        assert r.error is None, r.error
        with open(trace) as f:
            text = f.read()
        return out.reshape(BLOCKS, 8)[:, :4].tolist(), [(t.start_ns, t.end_ns, t.spans) for t in r.tasks], r.sim_time_ns, text
    return run


@pytest.mark.parametrize("store_every", [0, 64])  # 64: a GM store among the reads, applied before the next
def test_a_polling_loop_reads_and_times_as_with_every_read_on_the_full_path(poll, store_every):
    lines, tasks, sim_ns, trace = poll(FAST, store_every)
    full_lines, full_tasks, full_sim_ns, full_trace = poll(FULL, store_every)
    assert all(reads > 1000 for _, _, reads, _ in lines)  # each loop spans many quanta
    assert all((stores > 10) == (store_every != 0) for _, _, _, stores in lines)
    assert lines == full_lines
    assert (tasks, sim_ns) == (full_tasks, full_sim_ns)
    assert trace == full_trace


def test_a_kernel_that_times_differently_is_told_apart(poll):
    # Negative control: one more scalar op every 1024 reads changes the reads
    # each block makes, and the fixed-count delay after its loop ends later.
    lines, tasks, sim_ns, trace = poll(FAST)
    other_lines, other_tasks, other_sim_ns, other_trace = poll(FULL_PLUS_ONE_OP)
    assert lines != other_lines
    assert tasks != other_tasks and trace != other_trace

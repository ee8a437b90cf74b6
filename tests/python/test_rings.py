"""simpler's runtime_env ring sizes beyond the heap: the task window of each
scope depth's ring (the orchestrator waits, in simulated time, for a slot; a
scope that can never fit, or a window held by open scopes, is simpler's fatal
code) and the dependency pool (fanin entries beyond the 64 inline and the
producers' fanout links). Each limit is run at the limit and one past it, and
beside the same run without the setting (the negative control)."""

import os

import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
HOLD = 100  # ticks of the 50 MHz counter each stamp task holds its core: 2 us
MIB = 1 << 20


@pytest.fixture(scope="module")
def rings():
    with pfsim.Worker() as worker:
        handle = worker.register(pfsim.Callable.from_dict({
            "orchestration": {"source": "kernels/orchestration/ring_window_orch.cpp"},
            "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
        }, HERE))

        def run(scenario, n, hold=HOLD, lines=None, **sizes):
            """The start tick stamped into each of the first `lines` (n) lines, and the result."""
            lines = lines or n
            out = torch.zeros(max(lines, 1) * 8, dtype=torch.int64)
            r = worker.run(handle, [out, scenario, n, hold], **sizes)
            return out.reshape(-1, 8)[:lines, 0].tolist(), r
        yield run


def fatal(code, name):
    return rf"fatal {code} \(PTO2_ERROR_{name}\) at ring_window_orch.cpp:\d+: task \d+ \((aiv, func 0|dummy)\): "


def test_the_orchestrator_waits_for_a_slot_in_the_task_window(rings):
    # Window 4 on ring 1 (each task in a scope of its own there): 3 tasks in
    # flight. The fourth starts once the first has completed and been given back.
    window = [0, 4, 0, 0]
    starts, _ = rings(0, 3, ring_task_window=window)  # at the limit: no wait
    assert max(starts) - min(starts) < HOLD, starts
    starts, _ = rings(0, 4, ring_task_window=window)  # one past it
    assert max(starts[:3]) - min(starts[:3]) < HOLD, starts
    assert starts[3] >= starts[0] + HOLD, starts
    # Negative control: the default window (16384) lets all four start together.
    starts, _ = rings(0, 4)
    assert max(starts) - min(starts) < HOLD, starts
    # The window is per ring: ring 0's does not hold ring 1's tasks.
    starts, _ = rings(0, 4, ring_task_window=[4, 0, 0, 0])
    assert max(starts) - min(starts) < HOLD, starts


def test_a_task_is_given_back_once_the_tasks_retaining_it_complete(rings):
    # Ring 1 (window 4) holds task A, then the n tasks after it; task C, in the
    # outer scope, depends on A and holds its core 10x HOLD. With the default
    # DEP_RETAIN, A's slot waits for C: the third task after A starts after C.
    window = [0, 4, 0, 0]
    starts, _ = rings(5, 3, hold=10 * HOLD, lines=5, ring_task_window=window)
    c, after = starts[1], starts[2:]
    assert after[2] >= c + 10 * HOLD, starts
    assert max(after[:2]) < c + HOLD, starts  # the two before it fit beside A
    # Negative control: an ordering-only dependency (DEP_WAIT) does not hold A.
    starts, _ = rings(6, 3, hold=10 * HOLD, lines=5, ring_task_window=window)
    assert starts[4] < starts[1] + HOLD, starts


def test_a_scope_holding_more_than_its_window_is_a_scope_deadlock(rings):
    # A scope's tasks are given back only when it ends: window 8 holds 7.
    rings(1, 7, ring_task_window=8)
    with pytest.raises(ValueError, match=fatal(1, "SCOPE_DEADLOCK") + r"its scope already holds 7 tasks, all the "
                                         r"task window of ring 1 \(runtime_env.ring_task_window = 8\) can hold"):
        rings(1, 8, ring_task_window=8)
    rings(1, 8)  # negative control: the default window


def test_a_window_full_of_open_scopes_is_a_flow_control_deadlock(rings):
    # Nested scopes, a task each: depths 3 and deeper share ring 3, whose
    # window 4 holds 3 tasks, none given back while its scope is open.
    rings(2, 5, ring_task_window=4)
    with pytest.raises(ValueError, match=fatal(3, "FLOW_CONTROL_DEADLOCK") + r"the task window of ring 3 "
                                         r"\(runtime_env.ring_task_window = 4\) is full and its oldest task, task 2 "
                                         r"\(aiv, func 0\) \(submitted at ring_window_orch.cpp:\d+\), is held by its "
                                         r"scope, which is still open"):
        rings(2, 6, ring_task_window=4)
    rings(2, 6)  # negative control


def test_fanin_beyond_the_inline_64_takes_the_dependency_pool(rings):
    # Producers seen complete need no fanout links: only the fanin entries
    # beyond the 64 inline count, 4 of them at most.
    rings(3, 68, hold=1, ring_dep_pool=4)
    with pytest.raises(ValueError, match=fatal(4, "DEP_POOL_OVERFLOW") + r"69 dependencies: more than the 64 inline "
                                         r"fanin slots and ring 0's dependency pool \(runtime_env.ring_dep_pool = 4 "
                                         r"entries\) hold"):
        rings(3, 69, hold=1, ring_dep_pool=4)
    rings(3, 69, hold=1)  # negative control


def test_dependencies_on_running_producers_take_fanout_links(rings):
    rings(3, 4, hold=0, ring_dep_pool=4)
    with pytest.raises(ValueError, match=fatal(4, "DEP_POOL_OVERFLOW") + r"5 dependencies on running producers: "
                                         r"more fanout links than ring 0's dependency pool"):
        rings(3, 5, hold=0, ring_dep_pool=4)
    rings(3, 5, hold=0)  # negative control
    rings(3, 5, hold=1, ring_dep_pool=4)  # the same producers, waited for: no links


@pytest.mark.parametrize("sizes, message", [
    ({"ring_task_window": 6}, r"runtime_env.ring_task_window = 6: each ring's value must be a power of 2"),
    ({"ring_task_window": [4, 4]}, r"runtime_env.ring_task_window must be an int \(every ring\) or a list of 4"),
    ({"ring_dep_pool": 3}, r"runtime_env.ring_dep_pool = 3: each ring's value must be in \[4, 2\*\*31 - 1\]"),
    ({"ring_heap": [0, 512, 0, 0]}, r"runtime_env.ring_heap = \[0, 512, 0, 0\]: each ring's value must be at least"),
])
def test_sizes_simpler_rejects_are_rejected_by_name(rings, sizes, message):
    with pytest.raises(ValueError, match=message):
        rings(0, 1, **sizes)


def test_a_slot_that_never_comes_back_names_the_waiting_task_and_the_one_it_waits_for():
    # Window 4 on ring 1: the fourth task waits for the first to be given back;
    # the first holds its core 2 ms, past orch.time_limit (50 us), so it never
    # completes and the wait stalls, named by both tasks and their lines.
    with pfsim.Worker(set={"orch.time_limit": "50 us"}) as worker:
        handle = worker.register(pfsim.Callable.from_dict({
            "orchestration": {"source": "kernels/orchestration/ring_window_orch.cpp"},
            "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
        }, HERE))
        out = torch.zeros(4 * 8, dtype=torch.int64)
        with pytest.raises(Exception, match=r"task 3 \(aiv, func 0\) at ring_window_orch.cpp:\d+, waiting for ring 1 to "
                                            r"give back a task slot waits for task 0 \(aiv, func 0\) \(submitted at "
                                            r"ring_window_orch.cpp:\d+\), which can never complete"):
            worker.run(handle, [out, 0, 4, 100000], ring_task_window=[0, 4, 0, 0])
        # Negative control: a first task that completes (0.2 us) gives its slot back.
        worker.run(handle, [out, 0, 4, 10], ring_task_window=[0, 4, 0, 0])

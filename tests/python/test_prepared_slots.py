"""Prepared callables (simpler's private slot ABI): each prepare is a load of the
orchestration object of its own on the die, counted by the device; runs reuse it."""

import os

import pytest
import torch

import pfsim
from pfsim.testing import TaskArgsBuilder, TensorArg, _build_chip_task_args

HERE = os.path.dirname(os.path.abspath(__file__))


def run_count_callable(function="aicpu_orchestration_entry"):
    # run_count_orch.cpp tags out[1] with how many times its loaded object has run (a static)
    return pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/run_count_orch.cpp", "function_name": function,
                          "signature": [pfsim.ArgDirection.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
    }, HERE)


def tag_of(chip, slot):
    """The run count the slot's loaded orchestration reports on one more run."""
    args, outputs = _build_chip_task_args(TaskArgsBuilder(TensorArg("out", torch.zeros(8, dtype=torch.int64))),
                                          [pfsim.ArgDirection.OUT])
    assert outputs == ["out"]
    chip._run_slot(slot, args)
    return int(args.out[1])


def test_each_prepare_loads_the_orchestration_once_and_runs_reuse_it():
    with pfsim.Worker() as worker:
        chip = worker._chip_worker
        callable_ = run_count_callable()
        assert worker.aicpu_dlopen_count == 0
        chip._register_callable_at_slot(0, callable_)
        assert worker.aicpu_dlopen_count == 1
        assert [tag_of(chip, 0) for _ in range(3)] == [1, 2, 3]  # one object, its statics carried over
        assert worker.aicpu_dlopen_count == 1
        # Another slot with the same callable: a load of its own, statics from zero.
        # Negative control of the loads being real: were the slot given the object
        # slot 0 loaded (dlopen's handle of the same file), its first run would say 4.
        chip._register_callable_at_slot(1, callable_)
        assert worker.aicpu_dlopen_count == 2
        assert [tag_of(chip, 1), tag_of(chip, 0), tag_of(chip, 1)] == [1, 4, 2]
        assert worker.aicpu_dlopen_count == 2
        # An occupied slot is refused; nothing loaded.
        with pytest.raises(RuntimeError, match="slot 0 is already prepared"):
            chip._register_callable_at_slot(0, callable_)
        assert worker.aicpu_dlopen_count == 2
        # Unregister: the slot no longer runs, the count stays; prepare again loads again.
        chip._unregister_slot(0)
        assert worker.aicpu_dlopen_count == 2
        with pytest.raises(RuntimeError, match="slot 0 holds no prepared callable"):
            tag_of(chip, 0)
        chip._register_callable_at_slot(0, callable_)
        assert worker.aicpu_dlopen_count == 3
        assert tag_of(chip, 0) == 1
        assert tag_of(chip, 1) == 3  # slot 1's load untouched by slot 0's


def test_a_prepare_that_does_not_load_counts_nothing_and_leaves_the_slot_empty():
    with pfsim.Worker() as worker:
        chip = worker._chip_worker
        with pytest.raises(RuntimeError, match="no symbol 'no_such_entry'"):
            chip._register_callable_at_slot(0, run_count_callable("no_such_entry"))
        assert worker.aicpu_dlopen_count == 0
        with pytest.raises(RuntimeError, match="slot 0 holds no prepared callable"):
            tag_of(chip, 0)
        chip._unregister_slot(0)  # an empty slot: nothing to do


def test_a_released_handle_is_refused_by_the_device():
    with pfsim.Worker() as worker:
        handle = worker.prepare(run_count_callable())
        worker.release(handle)
        with pytest.raises(ValueError, match=f"no callable registered with handle {handle.id}"):
            worker.run(handle, [torch.zeros(8, dtype=torch.int64)])
        with pytest.raises(ValueError, match=f"no callable registered with handle {handle.id}"):
            worker.release(handle)
        assert worker.orchestration_loads == 1


def test_register_does_not_count_a_load():
    # register reuses the process's cached load of the object (the orchestration .so cache)
    with pfsim.Worker() as worker:
        worker.register(run_count_callable())
        assert worker.orchestration_loads == 0

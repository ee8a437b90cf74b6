"""The die's runtime slots (simpler's pipeline depth 2): each run's argument record passes
through its slot's staging buffer and retained GM buffer, which the device keeps per slot;
a pipeline lease names the slot and a generation that never goes back. The runtime's heap
ring is one bank that every slot shares."""

import os

import pytest
import torch

import pfsim
from pfsim.testing import TaskArgsBuilder, TensorArg, Scalar, _build_chip_task_args

HERE = os.path.dirname(os.path.abspath(__file__))
D = pfsim.ArgDirection


def byte_copy():
    # out = in; the scalar is a spin count, so a run's record shows which run staged it
    return pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/byte_copy_orch.cpp", "signature": [D.IN, D.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_byte_copy.cpp", "core_type": "aiv"}],
    }, HERE)


def copy_args(elements, fill, spin):
    return TaskArgsBuilder(TensorArg("x", torch.full((elements,), fill, dtype=torch.int32)),
                           TensorArg("y", torch.zeros(elements, dtype=torch.int32)), Scalar("spin", spin))


def run_copy(worker, handle, elements, fill, spin, slot=None, generation=None):
    """One byte copy, on the ordinary path (slot None) or leased on `slot`; its output checked."""
    args, outputs = _build_chip_task_args(copy_args(elements, fill, spin), [D.IN, D.OUT])
    if slot is None:
        worker.run(handle, args)
    else:
        worker._chip_worker._run_slot_with_pipeline_lease(worker._resolve_handle(handle).slot_id, args, slot,
                                                          generation)
    assert outputs == ["y"]
    assert torch.equal(args.y, args.x), f"slot {slot}: the copy of {fill} came out wrong"


def records(worker):
    """Each runtime slot's record as its retained GM holds it: (shapes, scalars)."""
    return [([t["shape"] for t in s["tensors"]], s["scalars"]) for s in worker._runtime_slots()["slots"]]


def test_each_slot_stages_its_runs_through_buffers_of_its_own():
    with pfsim.Worker() as worker:
        chip = worker._chip_worker
        assert (chip.pipeline_depth, chip.runtime_slot_count) == (2, 2)
        staging = chip.runtime_buffer_addrs
        assert len(staging) == 2 and staging[0] != staging[1] and 0 not in staging
        assert [chip.retained_temp_addr(s) for s in (0, 1, 2)] == [0, 0, 0]  # nothing staged yet; no slot 2
        assert records(worker) == [([], []), ([], [])]

        handle = worker.register(byte_copy())
        # Interleaved, each run its own shapes and spin count: the record each slot's GM holds
        # is its own last run's. Negative control: with both slots on one slot's buffers
        # (RuntimeSlots::stage taking slot 0's for either), slot 0 holds slot 1's last record.
        run_copy(worker, handle, 64, 3, 2)
        assert records(worker) == [([[64], [64]], [2]), ([], [])]
        run_copy(worker, handle, 96, -7, 5, slot=1, generation=1)
        run_copy(worker, handle, 32, 11, 4)
        run_copy(worker, handle, 128, 9, 6, slot=1, generation=2)
        assert records(worker) == [([[32], [32]], [4]), ([[128], [128]], [6])]

        retained = [chip.retained_temp_addr(s) for s in (0, 1)]
        assert 0 not in retained and retained[0] != retained[1]
        slots = worker._runtime_slots()["slots"]
        assert [s["calls"] for s in slots] == [2, 2]
        assert [s["generation"] for s in slots] == [0, 2]  # ordinary runs take no lease
        # Each retained buffer holds at least its record and lies apart from the other's.
        low, high = sorted(zip(retained, (s["retained_bytes"] for s in slots)))
        assert low[0] + low[1] <= high[0]
        assert chip.runtime_buffer_addrs == staging  # records this small never outgrow the first buffers


def test_a_lease_is_refused_for_a_stale_generation_or_a_slot_the_die_lacks():
    with pfsim.Worker() as worker:
        chip = worker._chip_worker
        handle = worker.register(byte_copy())
        slot = worker._resolve_handle(handle).slot_id
        assert worker._resolve_handle(handle).slot_id == slot  # one callable slot per handle
        run_copy(worker, handle, 16, 1, 0, slot=0, generation=5)
        run_copy(worker, handle, 16, 2, 0, slot=0, generation=5)  # the same generation again: admitted
        args, _ = _build_chip_task_args(copy_args(16, 3, 0), [D.IN, D.OUT])
        for runtime_slot, generation, message in ((0, 4, "lease generation 4 is stale"),
                                                  (0, 0, "generation is never 0"),
                                                  (2, 1, "runtime slot 2: the device has slots 0 to 1")):
            with pytest.raises(RuntimeError, match=message):
                chip._run_slot_with_pipeline_lease(slot, args, runtime_slot, generation)
        slots = worker._runtime_slots()["slots"]
        assert [s["calls"] for s in slots] == [2, 0] and slots[0]["generation"] == 5  # the refused ran nothing
        with pytest.raises(AttributeError, match="ChipWorker._launch_native_run: a part of simpler's chip worker "
                                                 "pfsim does not model"):
            chip._launch_native_run(None)  # simpler's native run in steps: refused by name
        with pytest.raises(RuntimeError, match="slot 7 holds no prepared callable"):
            chip._run_slot_with_pipeline_lease(7, args, 0, 6)
        worker.unregister(handle)
        with pytest.raises(RuntimeError, match=f"slot {slot} holds no prepared callable"):
            chip._run_slot_with_pipeline_lease(slot, args, 0, 6)


def test_the_heap_ring_is_one_bank_every_slot_shares():
    with pfsim.Worker() as worker:
        chip = worker._chip_worker
        copy = worker.register(byte_copy())
        run_copy(worker, copy, 16, 1, 0)
        assert chip.arena_bank_gm_heap_base(0) == 0  # a copy allocates nothing from the heap
        heap = worker.register(pfsim.Callable.from_dict({
            "orchestration": {"source": "kernels/orchestration/ring_heap_orch.cpp"},
            "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_stamp.cpp", "core_type": "aiv"}],
        }, HERE))
        out = torch.zeros(8, dtype=torch.int64)
        worker.run(heap, [out, 1024, 0])
        base = chip.arena_bank_gm_heap_base(0)
        assert base != 0 and int(out[1]) == 7
        assert base not in (chip.retained_temp_addr(0), chip.retained_temp_addr(1))
        worker._chip_worker._run_slot_with_pipeline_lease(worker._resolve_handle(heap).slot_id,
                                                          [out, 1024, 0], 1, 1)
        assert chip.arena_bank_gm_heap_base(0) == base  # slot 1's run allocated from the same ring
        assert chip.arena_bank_gm_heap_base(1) == 0  # never a second bank

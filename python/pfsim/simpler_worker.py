"""simpler's `simpler.worker.Worker` on pfsim (under pfsim's harness,
`from simpler.worker import Worker` resolves here): level 2 is one simulated
die (pfsim.Worker), level 3 several dies of one simulation
(pfsim.level3.L3Worker). Constructed, then `init()`, as simpler's is; the
rest of simpler's worker module (its mailboxes, its process tree) is simpler's
own and not provided: importing such a name is an ImportError saying so.
"""

from __future__ import annotations

import sys

from . import Callable, CompileError
from . import Worker as _DieWorker
from .level3 import L3Worker
from .task_interface import CallConfig, ring_values

__all__ = ["Worker"]

_warned = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned:
        _warned.add(key)
        print(f"pfsim: warning: {message}", file=sys.stderr)


class Worker:
    """simpler's Worker: level=2 (device_id) or level=3 (device_ids, num_sub_workers).
    platform is a2a3 or a2a3sim (pfsim simulates a2a3 for both), runtime
    tensormap_and_ringbuffer; any other value is refused by name."""

    def __init__(self, level: int, device_id: int = 0, device_ids=None, num_sub_workers: int = 0,
                 platform: str = "a2a3sim", runtime: str = "tensormap_and_ringbuffer", enable_sdma: bool = False,
                 **options):
        if options:
            raise TypeError(f"Worker: option '{sorted(options)[0]}' of simpler's Worker is not modelled on pfsim")
        if int(level) not in (2, 3):
            raise ValueError(f"Worker(level={level}): pfsim runs level 2 (one die) and level 3 (several dies of one "
                             "node); a network of nodes is not modelled")
        if platform not in ("a2a3", "a2a3sim"):
            raise ValueError(f"Worker(platform={platform!r}): pfsim simulates a2a3 (a2a3 or a2a3sim)")
        if runtime != "tensormap_and_ringbuffer":
            raise ValueError(f"Worker(runtime={runtime!r}): pfsim runs the tensormap_and_ringbuffer runtime")
        if int(level) == 2 and num_sub_workers:
            raise ValueError("Worker(level=2, num_sub_workers=...): sub-workers are level 3")
        self.level = int(level)
        self.device_ids = list(device_ids) if device_ids is not None else [int(device_id)]
        self.num_sub_workers = int(num_sub_workers)
        self.platform, self.runtime, self.enable_sdma = platform, runtime, bool(enable_sdma)
        self._impl = None

    def init(self, prewarm_config: CallConfig | None = None) -> None:
        """Starts the die(s). prewarm_config (simpler sizes its runtime arena ahead of the
        first run with it) is checked as a run's configuration is; pfsim sizes a run's
        rings when the run starts, so there is nothing to warm (warned once)."""
        if prewarm_config is not None:
            refused = prewarm_config.refused()
            if refused:
                raise ValueError(f"Worker.init(prewarm_config): {refused[0]}")
            env = prewarm_config.runtime_env
            for field in env.FIELDS:
                ring_values(field, getattr(env, field))
            _warn_once("prewarm", "Worker.init(prewarm_config): checked; pfsim sizes each run's rings when it runs, "
                                  "so no runtime arena is warmed ahead (not modelled)")
        if self._impl is not None:
            raise RuntimeError("Worker.init: already initialised")
        if self.level == 2:
            self._impl = _DieWorker(enable_sdma=self.enable_sdma)
        else:
            self._impl = L3Worker(device_count=len(self.device_ids), num_sub_workers=self.num_sub_workers,
                                  enable_sdma=self.enable_sdma)

    def close(self) -> None:
        if self._impl is not None:
            self._impl.close()
            self._impl = None

    def __getattr__(self, name: str):
        impl = self.__dict__.get("_impl")
        if impl is None:
            raise RuntimeError(f"Worker.{name}: call init() first")
        return getattr(impl, name)


class ChipWorker:
    """simpler's private prepared-callable ABI of a level-2 worker on pfsim: numbered
    slots, each holding a callable the die prepared (pfsim.Worker.prepare: its own load
    of the orchestration object), run by slot. Errors are RuntimeErrors, as simpler's."""

    def __init__(self, die: _DieWorker):
        self._die = die
        self._slots = {}  # slot -> pfsim.Handle

    def _register_callable_at_slot(self, slot: int, callable) -> None:
        """Prepares `callable` (a pfsim.Callable, build_callable's) in `slot`; RuntimeError when
        the slot holds one already or the callable does not compile or load (nothing counted)."""
        if slot in self._slots:
            raise RuntimeError(f"_register_callable_at_slot: slot {slot} is already prepared; unregister it first")
        if not isinstance(callable, Callable):
            raise TypeError(f"_register_callable_at_slot: a callable from build_callable, not {type(callable).__name__}")
        try:
            self._slots[slot] = self._die.prepare(callable)
        except (CompileError, ValueError, FileNotFoundError) as e:
            raise RuntimeError(f"_register_callable_at_slot: slot {slot}: {e}") from None

    def _run_slot(self, slot: int, args, config=None):
        """Runs the callable prepared in `slot` on `args` (_build_chip_task_args's), its outputs
        written back in place; `config` a CallConfig (its ring sizes and aicpu_thread_num; a field
        pfsim does not honour is refused by name). The run's pfsim.RunResult."""
        return self._die.run(self._handle(slot, "_run_slot"), args, config=config)

    def _run_slot_with_pipeline_lease(self, slot: int, args, runtime_slot: int, generation: int, config=None):
        """As _run_slot, its arguments passed through the die's `runtime_slot` under simpler's
        pipeline lease: RuntimeError for a runtime slot the die lacks, a generation of 0 or one
        below the highest that slot was leased with."""
        handle = self._handle(slot, "_run_slot_with_pipeline_lease")
        try:
            return self._die.run(handle, args, config=config, runtime_slot=int(runtime_slot),
                                 lease_generation=int(generation))
        except ValueError as e:
            if "runtime slot" not in str(e):
                raise
            raise RuntimeError(f"_run_slot_with_pipeline_lease: {e}") from None

    def _handle(self, slot: int, what: str):
        if slot not in self._slots:
            raise RuntimeError(f"{what}: slot {slot} holds no prepared callable")
        return self._slots[slot]

    def _adopt(self, handle):
        """The callable slot of a handle Worker.register gave (the lowest free one, taken at
        its first use: simpler numbers registered and prepared callables alike)."""
        for slot, held in self._slots.items():
            if held is handle or held.id == handle.id:
                return slot
        slot = next(n for n in range(len(self._slots) + 1) if n not in self._slots)
        self._slots[slot] = handle
        return slot

    def _forget(self, handle) -> None:
        """Drops a released handle's slot, if it had one."""
        for slot in [s for s, held in self._slots.items() if held.id == handle.id]:
            del self._slots[slot]

    # -- the die's runtime slots (pfsim's device keeps them: docs/python.md#pipeline-slots) --

    @property
    def pipeline_depth(self) -> int:
        return int(self._die._runtime_slots()["pipeline_depth"])

    @property
    def runtime_slot_count(self) -> int:
        return len(self._die._runtime_slots()["slots"])

    @property
    def runtime_buffer_addrs(self) -> list:
        """Each runtime slot's staging buffer (a host address of the device process), in slot order."""
        return [int(s["staging"]) for s in self._die._runtime_slots()["slots"]]

    def retained_temp_addr(self, slot: int) -> int:
        """The GM buffer `slot` passes each run's argument record through (as the AICPU
        addresses it); 0 before the slot ran, or for a slot the die lacks."""
        slots = self._die._runtime_slots()["slots"]
        return int(slots[slot]["retained"]) if 0 <= slot < len(slots) else 0

    def arena_bank_gm_heap_base(self, bank: int) -> int:
        """Where the runtime's heap ring begins in bank `bank`: the die has one, bank 0, shared
        by every runtime slot (0 before a run allocated from it); any other bank is never committed: 0."""
        banks = self._die._runtime_slots()["heap_banks"]
        return int(banks[bank]) if 0 <= bank < len(banks) else 0

    def __getattr__(self, name: str):
        """A name of simpler's chip worker pfsim does not provide (its native runs in steps,
        `_prepare_native_run_with_pipeline_lease` and the rest, its stream and host-dlopen
        counters, its memory calls): an AttributeError naming it."""
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"ChipWorker.{name}: a part of simpler's chip worker pfsim does not model (pfsim's "
                             "provides prepared and registered callable slots and the runtime slots: docs/python.md)")

    def _unregister_slot(self, slot: int) -> None:
        """Lets the slot go (the die refuses runs on what it held); an empty slot: nothing to do."""
        handle = self._slots.pop(slot, None)
        if handle is not None:
            self._die.release(handle)

"""The names of simpler's `simpler.task_interface` that scene tests use, as pfsim
provides them: under pfsim's harness, `from simpler.task_interface import ...`
resolves here (pfsim._simpler).

The enums carry simpler's values (its C++ ABI). `CallConfig` holds a run's
configuration as simpler spells it; pfsim honours the defaults and refuses by
name every field it does not model (`CallConfig.refused()`); the ring sizes of
`runtime_env` it models (`ring_values`). The level-3
names (`TaskArgs`, `CommBufferSpec`) are those of pfsim.level3's worker.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import IntEnum

from . import ArgDirection

__all__ = ["ArgDirection", "DataType", "TensorArgType", "CallConfig", "RuntimeEnv", "TaskArgs", "CommBufferSpec",
           "ring_values", "scalar_to_uint64"]


class DataType(IntEnum):
    """An a2a3 tensor element type (simpler's DataType, same values)."""
    FLOAT32 = 0
    FLOAT16 = 1
    INT32 = 2
    INT16 = 3
    INT8 = 4
    UINT8 = 5
    BFLOAT16 = 6
    INT64 = 7
    UINT64 = 8
    UINT16 = 9
    UINT32 = 10
    BOOL = 11


class TensorArgType(IntEnum):
    """How a task uses a tensor (simpler's TensorArgType, same values)."""
    INPUT = 0
    OUTPUT = 1
    INOUT = 2
    OUTPUT_EXISTING = 3
    NO_DEP = 4


RING_COUNT = 4  # simpler's PTO2_MAX_RING_DEPTH: one ring per scope depth, the last for all deeper ones


def ring_values(field: str, value) -> list[int]:
    """A runtime_env ring size as simpler takes it: an int for every ring or a
    list of one per ring, 0 for the runtime's default; the four values. ValueError
    (naming the field) for what simpler rejects: ring_task_window a power of 2 in
    [4, 2**31 - 1], ring_heap at least 1024 bytes, ring_dep_pool in [4, 2**31 - 1]."""
    values = [value] * RING_COUNT if isinstance(value, int) and not isinstance(value, bool) else value
    if (not isinstance(values, (list, tuple)) or len(values) != RING_COUNT
            or not all(isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 2 ** 64 for v in values)):
        raise ValueError(f"runtime_env.{field} must be an int (every ring) or a list of {RING_COUNT} ints (one per "
                         f"scope-depth ring), not {value!r}")
    valid = {
        "ring_task_window": (lambda v: 4 <= v < 2 ** 31 and v & (v - 1) == 0, "a power of 2 in [4, 2**31 - 1]"),
        "ring_heap": (lambda v: v >= 1024, "at least 1024 (bytes per ring)"),
        "ring_dep_pool": (lambda v: 4 <= v < 2 ** 31, "in [4, 2**31 - 1]"),
    }
    ok, rule = valid[field]
    for v in values:
        if v and not ok(v):
            raise ValueError(f"runtime_env.{field} = {value!r}: each ring's value must be {rule} (0: the default)")
    return list(values)


class RuntimeEnv:
    """CallConfig.runtime_env: the tensormap_and_ringbuffer ring sizes (0 = the runtime's default),
    each an int for every ring or a list of one per scope-depth ring (`ring_values`)."""
    FIELDS = ("ring_task_window", "ring_heap", "ring_dep_pool")

    def __init__(self):
        self.ring_task_window = 0
        self.ring_heap = 0
        self.ring_dep_pool = 0


class CallConfig:
    """A run's configuration, simpler's fields. pfsim honours `runtime_env`'s ring
    sizes and `aicpu_thread_num` (its scheduler threads' share of the cores: Worker.run); every
    other field only at its default (0 / False / ""): `refused()` names the ones set otherwise."""

    # field -> why pfsim cannot honour a value other than the default. pfsim writes simpler's
    # diagnostics for a scene test's runs, from `pfsim test`'s options (pfsim._diagnostics), not
    # from a CallConfig handed to a run (a level-3 chip task's, a worker's prewarm configuration).
    _FROM_OPTIONS = "pfsim writes it for scene tests from `pfsim test {}`, not from a run's CallConfig"
    UNMODELLED = {
        "enable_chip_swimlane": _FROM_OPTIONS.format("--enable-chip-swimlane"),
        "enable_dump_args": _FROM_OPTIONS.format("--dump-args"),
        "enable_pmu": _FROM_OPTIONS.format("--enable-pmu"),
        "enable_dep_gen": _FROM_OPTIONS.format("--enable-dep-gen"),
        "enable_scope_stats": _FROM_OPTIONS.format("--enable-scope-stats"),
    }

    def __init__(self):
        self.aicpu_thread_num = 0
        self.runtime_env = RuntimeEnv()
        self.enable_chip_swimlane = 0
        self.enable_dump_args = 0
        self.enable_pmu = 0
        self.enable_dep_gen = False
        self.enable_scope_stats = False
        self.output_prefix = ""

    def refused(self) -> list[str]:
        """'field: why' for every field set to a value pfsim does not honour."""
        out = []
        for field, why in self.UNMODELLED.items():
            obj, name = (self.runtime_env, field.split(".", 1)[1]) if "." in field else (self, field)
            value = getattr(obj, name)
            if value:
                out.append(f"{field}={value!r}: {why}")
        return out

    def run_options(self, where: str) -> dict:
        """The pfsim.Worker.run options this configuration asks for (ring sizes set, aicpu_thread_num);
        ValueError beginning with `where` for a field pfsim does not honour."""
        refused = self.refused()
        if refused:
            raise ValueError(f"{where}: config {refused[0]}")
        options = {"aicpu_thread_num": self.aicpu_thread_num}
        for name in self.runtime_env.FIELDS:
            value = getattr(self.runtime_env, name)
            if value:
                options[name] = ring_values(name, value)
        return options


class TaskArgs:
    """A level-3 task's arguments (simpler's TaskArgs): tensors, each with its
    TensorArgType tag (which orders the tasks: pfsim.level3), then scalars."""

    def __init__(self):
        self.tensors = []  # (pfsim.level3.TensorRef, TensorArgType)
        self.scalars = []

    def add_tensor(self, tensor, tag=TensorArgType.INPUT) -> None:
        from .level3 import TensorRef

        if not isinstance(tensor, TensorRef):
            raise TypeError(f"TaskArgs.add_tensor: a tensor named over a buffer (buffer.tensor(shapes, dtype)), "
                            f"not {type(tensor).__name__}")
        if self.scalars:
            raise ValueError("TaskArgs.add_tensor: tensors come before scalars")
        self.tensors.append((tensor, TensorArgType(int(tag))))

    def add_scalar(self, value) -> None:
        self.scalars.append(value)

    def tensor_count(self) -> int:
        return len(self.tensors)

    def scalar_count(self) -> int:
        return len(self.scalars)


@dataclass
class CommBufferSpec:
    """A named slice of each rank's comm window, carved in declaration order
    (Orchestrator.allocate_domain). pfsim does not stage a buffer from or to the
    host by itself: load_from_host / store_to_host are refused by name."""
    name: str
    dtype: str
    count: int
    nbytes: int
    load_from_host: bool = False
    store_to_host: bool = False

    def __post_init__(self):
        for flag in ("load_from_host", "store_to_host"):
            if getattr(self, flag):
                raise NotImplementedError(f"CommBufferSpec({self.name!r}): {flag}=True is not modelled on pfsim "
                                          "(copy with orch.copy_to / orch.copy_from)")


def scalar_to_uint64(value) -> int:
    """A scalar as the 64-bit slot a kernel reads (a float as float32 bits)."""
    from . import _tensors

    return _tensors.scalar_bits(value, "scalar")

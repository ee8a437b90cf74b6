"""Scene tests on pfsim: the shape and semantics of simpler's level-2 harness.

A scene test written for simpler runs here unchanged: under pfsim's pytest
plugin its `simpler_setup` and `simpler.task_interface` imports resolve to this
module and pfsim.task_interface (pfsim._simpler). Imported directly:

    from pfsim.testing import SceneTestCase, TaskArgsBuilder, TensorArg, Scalar, scene_test
    from pfsim.testing import ArgDirection as D

Every selected case runs twice, prefetch off and on, each on a fresh Worker: it
passes only when both runs' outputs match the golden within RTOL/ATOL and are
bit-identical to each other. The gain is recorded on the test (junit
properties) and printed per case by the pfsim pytest plugin (pfsim.plugin).
docs/python.md is the reference.
"""

from __future__ import annotations

import copy
import inspect
import os
import sys
import time
from pathlib import Path
from contextlib import contextmanager
from enum import IntEnum
from typing import Any, NamedTuple

import pytest

from . import ArgDirection, Callable, CompileError, RunError, Worker, _diagnostics, _tensors

from .task_interface import CallConfig, ring_values

__all__ = ["SceneTestCase", "TaskArgsBuilder", "TensorArg", "Scalar", "scene_test", "scene_level", "ArgDirection",
           "SceneTestLevel", "CaseOutcome", "is_manual_for_platform", "CallableNamespace",
           "CaseFileTest", "describe_case_file"]

PLATFORMS = ("a2a3", "a2a3sim")  # pfsim simulates a2a3; cases for either run
CASE_KEYS = {"name", "platforms", "manual", "config", "params", "skip_golden"}
CONFIG_KEYS = {"aicpu_thread_num", "runtime_env", "device_count", "num_sub_workers"}  # simpler's
# What pfsim runs but does not model in full, warned once per process on stderr
# when a case sets it (what it cannot honour at all is refused: CallConfig.UNMODELLED).
WARNED_CONFIG = {
    "runtime_env.ring_heap": "each ring's capacity is enforced, but the orchestrator's wait for an ended scope's "
                             "outputs to be given back is not modelled (it takes no time)",
    "runtime_env.ring_dep_pool": "not modelled in full: pfsim counts a fanout link for every producer the "
                                 "orchestrator has not waited for (the board: those not yet complete), so it can "
                                 "wait, or fail, where the board does not",
}
# ... and at level 3 only (a level-2 run honours it: the scheduler threads own their share of the cores)
WARNED_CONFIG_L3 = {
    "aicpu_thread_num": "not modelled at level 3: each chip runs simpler's default of 4 AICPU threads "
                        "(3 schedulers), whatever the count",
}
_warned_config = set()


def _warn_unmodelled_config(config: dict, where: str, level3: bool = False) -> None:
    names = [k for k in config if k != "runtime_env"]
    names += [f"runtime_env.{k}" for k in config.get("runtime_env", {})]
    warned = {**WARNED_CONFIG, **(WARNED_CONFIG_L3 if level3 else {})}
    for name in names:
        if name in warned and name not in _warned_config:
            _warned_config.add(name)
            print(f"pfsim: warning: {where}: config {name}: {warned[name]}",
                  file=sys.stderr)


_has_simulator_branch: dict = {}  # kernel source path -> whether it has a __CPU_SIM branch (warned once)


def _warn_simulator_branch_on_board_case(case: dict, platform: str, incores: list, st_dir: str, where: str) -> None:
    """A case listed for the board only runs what pfsim compiles, the `__CPU_SIM` branch of its
    kernels, not the board's: warned once per kernel source that has such a branch."""
    if platform != "a2a3" or "a2a3sim" in case["platforms"]:
        return
    for incore in incores:
        path = os.path.join(st_dir, incore.get("source", ""))
        if path in _has_simulator_branch:
            continue
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                _has_simulator_branch[path] = "__CPU_SIM" in f.read()
        except OSError:
            continue  # a missing source is the run's error, named there
        if _has_simulator_branch[path]:
            print(f"pfsim: warning: {where}: listed for a2a3 only, and kernel {incore['source']} has a __CPU_SIM "
                  "branch: pfsim compiles that branch (as a2a3sim does), not the board's, and times it on the "
                  "simulated core", file=sys.stderr)


RUNTIME_ENV_KEYS = {"ring_task_window", "ring_heap", "ring_dep_pool"}
# `pfsim test --pfsim-set KEY=VALUE`: configuration every worker of the session takes, over a
# class's PFSIM_SET (pfsim._harness fills it)
SESSION_SET: dict = {}
# Methods of simpler's SceneTestCase that run a case there and that pfsim's harness
# does not call: a class overriding one is refused (what it adds would silently not
# run). (_build_config is not among them: pfsim's harness calls it before each run.)
# A class's own _run_and_validate_l2 is called instead (as simpler's harness calls it: scene_test).
SIMPLER_INTERNAL_HOOKS = {"_run_and_validate", "_run_and_validate_l3", "build_callable",
                          "_create_worker", "compile_chip_callable", "_compile_l3_callables"}


class _CaseFailed(Exception):
    """A case's failure, its message naming the case and the cause."""


class SceneTestLevel(IntEnum):
    CHIP = 2
    NODE = 3
    NETWORK1 = 4


class TensorArg(NamedTuple):
    name: str
    value: Any


class Scalar(NamedTuple):
    name: str
    value: Any


class TaskArgsBuilder:
    """The arguments of a call, in order: tensors first, then scalars; each
    reachable as an attribute by its name."""

    def __init__(self, *specs):
        object.__setattr__(self, "specs", [])
        for s in specs:
            if isinstance(s, TensorArg):
                self.add_tensor(s.name, s.value)
            elif isinstance(s, Scalar):
                self.add_scalar(s.name, s.value)
            else:
                raise TypeError(f"TaskArgsBuilder takes TensorArg and Scalar values, not {type(s).__name__}")

    def _check_name(self, name: str) -> None:
        if any(s.name == name for s in self.specs):
            raise ValueError(f"argument name '{name}' repeats")
        if hasattr(type(self), name) or name == "specs":
            raise ValueError(f"argument name '{name}' collides with a TaskArgsBuilder member")

    def add_tensor(self, name: str, value) -> None:
        self._check_name(name)
        if any(isinstance(s, Scalar) for s in self.specs):
            raise ValueError(f"tensor '{name}' comes after a scalar: tensors must come before scalars")
        if not _tensors.is_tensor(value):
            raise TypeError(f"tensor '{name}' must be a torch tensor or a numpy array, not {type(value).__name__}")
        self.specs.append(TensorArg(name, value))

    def add_scalar(self, name: str, value) -> None:
        self._check_name(name)
        self.specs.append(Scalar(name, value))

    @property
    def tensor_names(self) -> list[str]:
        return [s.name for s in self.specs if isinstance(s, TensorArg)]

    def clone(self) -> "TaskArgsBuilder":
        out = TaskArgsBuilder()
        for s in self.specs:
            v = s.value.clone() if hasattr(s.value, "clone") else copy.deepcopy(s.value)
            out.specs.append(type(s)(s.name, v))
        return out

    def copy_on_write_clone(self) -> "TaskArgsBuilder":
        """A clone whose tensors share this builder's memory until either side writes
        it (_tensors.copy_on_write; this builder's large tensors move into memory
        files, the same values): a clone costs memory only for what is written."""
        names = [s.name for s in self.specs if isinstance(s, TensorArg)]
        kept, copies = _tensors.copy_on_write([getattr(self, n) for n in names])
        mine, cloned = dict(zip(names, kept)), dict(zip(names, copies))
        out = TaskArgsBuilder()
        for n, s in enumerate(self.specs):
            if isinstance(s, TensorArg):
                self.specs[n] = TensorArg(s.name, mine[s.name])
                out.specs.append(TensorArg(s.name, cloned[s.name]))
            else:
                out.specs.append(type(s)(s.name, copy.deepcopy(s.value)))
        return out

    def share_unchanged(self, other: "TaskArgsBuilder") -> None:
        """Each tensor holding the same bytes as `other`'s of the same name becomes
        `other`'s (this builder's own copy is freed): a golden keeps memory only for
        the tensors compute_golden changed."""
        tensors = [(n, s) for n, s in enumerate(self.specs) if isinstance(s, TensorArg)]
        # A copy-on-write clone whose pages were never written is unchanged, known without
        # reading either side's memory (reading would map the arguments' pages for nothing).
        unwritten = _tensors.unwritten_copies([s.value for _, s in tensors])
        for (n, s), clean in zip(tensors, unwritten):
            theirs = getattr(other, s.name, None)
            if not _tensors.is_tensor(theirs) or type(theirs) is not type(s.value) or \
                    theirs.dtype != s.value.dtype or tuple(theirs.shape) != tuple(s.value.shape):
                continue
            if clean if clean is not None else _tensors.same_bytes(theirs, s.value):
                self.specs[n] = TensorArg(s.name, theirs)

    def fresh_outputs(self, outputs) -> "TaskArgsBuilder":
        """The same arguments with the tensors named in `outputs` copied, the others
        shared: the arguments of a run, which writes back only its outputs. A large
        output's copy is in a memory file of its own (_tensors.shared_copy), which the
        run maps as its GM: the device writes the results there in place."""
        out = TaskArgsBuilder()
        for s in self.specs:
            v = _tensors.shared_copy(s.value) if s.name in outputs and _tensors.is_tensor(s.value) else (
                copy.deepcopy(s.value) if s.name in outputs else s.value)
            out.specs.append(type(s)(s.name, v))
        return out

    def __getattr__(self, name: str):
        for s in object.__getattribute__(self, "specs"):
            if s.name == name:
                return s.value
        raise AttributeError(f"no argument named '{name}'")

    def __setattr__(self, name, value):
        raise AttributeError("TaskArgsBuilder arguments are set with add_tensor / add_scalar")


class CaseOutcome(NamedTuple):
    """What a case measured with prefetch off and on."""
    time_off_ns: float
    time_on_ns: float
    l2_hit_rate_off: float
    l2_hit_rate_on: float

    @property
    def gain_pct(self) -> float:
        return 100.0 * (self.time_off_ns - self.time_on_ns) / self.time_off_ns if self.time_off_ns else 0.0


def uncertainty_keys(option: str | None, ranges: dict) -> list[str] | None:
    """The parameters `--pfsim-uncertainty[=KEY,...]` varies: None without the option; every key
    whose range has two ends when it names none; else the keys it names, each of which must have a
    range (_CaseFailed naming the first that has none)."""
    if option is None:
        return None
    if not option:
        return [k for k, (low, high) in sorted(ranges.items()) if low != high]
    keys = [k for k in option.split(",") if k]
    for key in keys:
        if key not in ranges:
            raise _CaseFailed(f"--pfsim-uncertainty: '{key}' has no range in the configuration")
    return keys


def gain_band(gain: float, ranges: dict, gain_at) -> dict:
    """A gain's band over the parameters' plausible ranges, as `pfsim check --uncertainty` finds it:
    the gain at each end of each range ({KEY: (LOW, HIGH)}), one key at a time, then at the
    combinations that push it lowest and highest (each key at the end that moved it that way; a key
    neither of whose ends did keeps its value). gain_at({KEY: VALUE, ...}) is the gain with those
    settings, or None when it could not be measured there. Returns low_pct, high_pct (over every
    gain measured), most_sensitive (the key whose ends moved it most; "" when none did), sign_holds, per_key,
    combined ({"lowest"|"highest": {"sets", "gain_pct"}}) and not_measured."""
    per_key, not_measured = {}, []
    for key, (low, high) in ranges.items():
        a, b = gain_at({key: low}), gain_at({key: high})
        if a is None or b is None:
            not_measured.append(key)
        else:
            per_key[key] = (a, b)
    combined = {}
    for direction in ("lowest", "highest"):
        sets = {}
        for key, (a, b) in per_key.items():
            low_end = a <= b if direction == "lowest" else a >= b
            end = a if low_end else b
            if (end < gain) if direction == "lowest" else (end > gain):
                sets[key] = ranges[key][0 if low_end else 1]
        if len(sets) == 1:  # one key's own end, measured already
            (key, value), = sets.items()
            measured = per_key[key][0 if value == ranges[key][0] else 1]
        else:
            measured = gain_at(sets) if sets else None
        if sets and measured is None:
            not_measured.append(f"the {direction} combination")
        combined[direction] = {"sets": sets, "gain_pct": measured}
    gains = [gain] + [g for ends in per_key.values() for g in ends]
    gains += [c["gain_pct"] for c in combined.values() if c["gain_pct"] is not None]
    low, high = min(gains), max(gains)
    moved = {k: max(abs(a - gain), abs(b - gain)) for k, (a, b) in per_key.items()}
    most = max(moved, key=moved.get, default="")  # the first of equals, as the CLI's; none when nothing moved
    most = most if most and moved[most] > 0 else ""
    return {"low_pct": low, "high_pct": high, "most_sensitive": most,
            "sign_holds": (low > 0 and high > 0) or (low < 0 and high < 0) or (low == 0 and high == 0),
            "per_key": per_key, "combined": combined, "not_measured": not_measured}


def _band_of(outcome: "CaseOutcome", option: str | None, ranges: dict, pair_at) -> dict | None:
    """The gain band `--pfsim-uncertainty[=KEY,...]` (option) asks for, or None without it:
    pair_at({KEY: VALUE, ...}) runs the case's pair with those settings (its CaseOutcome, or
    _CaseFailed: not measured there); ranges are the device's."""
    keys = uncertainty_keys(option, ranges)
    if not keys:
        return None

    def gain_at(sets: dict):
        try:
            return pair_at(sets).gain_pct
        except _CaseFailed:
            return None
    return gain_band(outcome.gain_pct, {k: ranges[k] for k in keys}, gain_at)


def _record_band(request, band: dict | None) -> None:
    """A case's gain band as its JUnit properties (the summary line reads them: _harness.band_text)."""
    if band is None:
        return
    for key in ("low_pct", "high_pct", "most_sensitive", "sign_holds"):
        value = band[key]
        request.node.user_properties.append((f"pfsim_gain_{key}", round(value, 3) if isinstance(value, float) else value))


class _Params(dict):
    """A case's params, remembering which ones the test read."""

    def __init__(self, *a, **k):
        super().__init__(*a, **k)
        self.read = set()

    def __getitem__(self, key):
        self.read.add(key)
        return super().__getitem__(key)

    def get(self, key, default=None):
        self.read.add(key)
        return super().get(key, default)

    def __contains__(self, key):
        self.read.add(key)
        return super().__contains__(key)

    def items(self):
        self.read.update(self.keys())
        return super().items()

    def values(self):
        self.read.update(self.keys())
        return super().values()

    def __iter__(self):
        self.read.update(self.keys())
        return super().__iter__()


def _chosen_platform(request) -> str:
    """The session's --platform (pfsim when the option is not registered)."""
    return request.config.getoption("--platform", default="pfsim") or "pfsim"


def run_platform(platforms, chosen: str) -> str | None:
    """The platform pfsim runs a case or test listing `platforms` as under `--platform chosen` (None:
    it does not run): a2a3sim or a2a3 takes those listed for it, as simpler does; pfsim (the
    default) every one listed for either, run as a2a3 when listed."""
    return next((p for p in (PLATFORMS if chosen == "pfsim" else (chosen,)) if p in platforms), None)


def platforms_skip_reason(platforms, chosen: str) -> str | None:
    """Why a case or test listing `platforms` does not run under `--platform chosen` (None: it runs)."""
    if run_platform(platforms, chosen):
        return None
    if chosen == "pfsim":
        return f"platforms {list(platforms)} include neither a2a3 nor a2a3sim"
    return (f"platforms {list(platforms)} do not include {chosen} (--platform {chosen} runs what simpler runs on "
            f"{chosen}; --platform pfsim, the default, runs every a2a3 or a2a3sim case)")


def is_manual_for_platform(manual, platform: str) -> bool:
    if isinstance(manual, str):
        return manual == platform
    if isinstance(manual, (list, tuple, set, frozenset)):
        return platform in manual
    return bool(manual)


def _parse_selector(text: str):
    if "::" in text:
        cls, case = text.split("::", 1)
        return cls, case or None
    return None, text


def _selected(cls_name: str, case_name: str, selectors) -> bool:
    if not selectors:
        return True
    for cls, case in selectors:
        if (cls is None or cls == cls_name) and (case is None or case == case_name):
            return True
    return False


def case_config(case: dict, where: str, level: int = 2) -> CallConfig:
    """A case's `config` as a CallConfig; ValueError naming the key pfsim does not
    know or cannot honour (a level-2 case runs on one die; CallConfig.UNMODELLED).
    At level 3, device_count (1 to 64 dies of one simulation) and num_sub_workers
    are the L3 worker's (l3_shape)."""
    config = case.get("config", {})
    bad = sorted(set(config) - CONFIG_KEYS)
    if bad:
        raise ValueError(f"{where}: unknown config key '{bad[0]}' (known: {', '.join(sorted(CONFIG_KEYS))})")
    env = config.get("runtime_env", {})
    bad = sorted(set(env) - RUNTIME_ENV_KEYS)
    if bad:
        raise ValueError(f"{where}: unknown config.runtime_env key '{bad[0]}' (known: "
                         f"{', '.join(sorted(RUNTIME_ENV_KEYS))})")
    if level == SceneTestLevel.NODE:
        l3_shape(config, where)
    elif config.get("device_count", 1) != 1:
        raise ValueError(f"{where}: config device_count={config['device_count']!r} is not honoured: pfsim runs a "
                         "level-2 case on one die")
    elif config.get("num_sub_workers", 0):
        raise ValueError(f"{where}: config num_sub_workers={config['num_sub_workers']!r} is not honoured: "
                         "sub-workers are level 3")
    cfg = CallConfig()
    cfg.aicpu_thread_num = config.get("aicpu_thread_num", 0)
    if type(cfg.aicpu_thread_num) is not int or not 0 <= cfg.aicpu_thread_num <= 4:
        raise ValueError(f"{where}: config aicpu_thread_num = {cfg.aicpu_thread_num!r}: simpler's a2a3 runs 1 to 4 "
                         "AICPU threads (0: its default, 4)")
    for key, value in env.items():
        try:
            setattr(cfg.runtime_env, key, ring_values(key, value))
        except ValueError as e:
            raise ValueError(f"{where}: config {e}") from None
    refused = cfg.refused()
    if refused:
        raise ValueError(f"{where}: config {refused[0]}, so the case cannot run as written")
    return cfg


def l3_shape(config: dict, where: str) -> tuple[int, int]:
    """A level-3 case's (device_count, num_sub_workers); ValueError naming a bad one."""
    devices, subs = config.get("device_count", 1), config.get("num_sub_workers", 0)
    if isinstance(devices, bool) or not isinstance(devices, int) or not 1 <= devices <= 64:
        raise ValueError(f"{where}: config device_count={devices!r}: pfsim simulates 1 to 64 dies in one simulation")
    if isinstance(subs, bool) or not isinstance(subs, int) or subs < 0:
        raise ValueError(f"{where}: config num_sub_workers={subs!r}: a number of sub-workers, 0 or more")
    return devices, subs


def scene_level(level):
    """Sets a class's scene level (simpler's scene_level); pfsim runs levels 2 (one die)
    and 3 (several dies of one simulation, pfsim.level3)."""

    def decorator(cls):
        if int(level) not in (SceneTestLevel.CHIP, SceneTestLevel.NODE):
            raise ValueError(f"{cls.__module__}.{cls.__name__}: pfsim runs level-2 (one die) and level-3 (several "
                             f"dies of one node) scene tests, not level {int(level)}")
        cls._st_level = int(level)
        return cls

    return decorator


def _generated(fn) -> bool:
    return getattr(fn, "_pfsim_generated", False)


def scene_test(level, runtime: str):
    """Marks a SceneTestCase. Without a test_run of its own, the class gets one
    pytest test per case, `test_run[NAME]`; a class's own test_run (and every
    other test_* method) is kept and run as written, with the fixtures
    st_platform, st_worker and st_device_ids."""

    def decorator(cls):
        where = f"{cls.__module__}.{cls.__name__}"
        scene_level(level)(cls)
        if runtime != "tensormap_and_ringbuffer":
            raise ValueError(f"{where}: pfsim runs the tensormap_and_ringbuffer runtime, not '{runtime}'")
        names = []
        for i, case in enumerate(cls.CASES):
            unknown = set(case) - CASE_KEYS
            if unknown:
                raise ValueError(f"{where}: CASES[{i}]: unknown key '{sorted(unknown)[0]}' (known: "
                                 f"{', '.join(sorted(CASE_KEYS))})")
            if "name" not in case or "platforms" not in case:
                raise ValueError(f"{where}: CASES[{i}]: a case needs a name and platforms")
            case_config(case, f"{where}: case {case['name']}", cls._st_level)
            if case["name"] in names:
                raise ValueError(f"{where}: case name '{case['name']}' repeats")
            names.append(case["name"])
        cls._st_runtime = runtime
        cls._st_dir = os.path.dirname(os.path.abspath(inspect.getfile(cls)))
        if cls._st_level == SceneTestLevel.NODE:
            _check_l3_callable(cls, where)
        for klass in cls.__mro__:
            hooks = sorted(set(vars(klass)) & SIMPLER_INTERNAL_HOOKS) if klass is not SceneTestCase else []
            if hooks:
                raise ValueError(f"{where}: {klass.__name__} overrides {hooks[0]}, a method of simpler's own harness "
                                 "that pfsim's harness never calls: what it checks would not run")

        own = cls.test_run is not SceneTestCase.test_run and not _generated(cls.test_run)
        if not own:
            @pytest.mark.parametrize("case_name", names)
            def test_run(self, case_name, request):
                reason = self._skip_reason(self._case(case_name), request)
                if reason:
                    pytest.skip(f"{type(self).__name__}::{case_name}: {reason}")
                if self._st_level == SceneTestLevel.NODE:
                    self._run_case_l3(case_name, request)
                elif type(self)._run_and_validate_l2 is not SceneTestCase._run_and_validate_l2:
                    self._run_own_l2(case_name, request)
                else:
                    self._run_case(case_name, request)

            test_run._pfsim_generated = True
            cls.test_run = test_run
        return cls

    return decorator


@contextmanager
def _runtime_env(env: dict, base_dir: str):
    saved = {k: os.environ.get(k) for k in env}
    try:
        for k, v in env.items():
            v = str(v)
            if (k.endswith("_DIR") or k.endswith("_PATH")) and v and not os.path.isabs(v):
                v = os.path.join(base_dir, v)
            os.environ[k] = v
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _as_torch(value):
    import torch

    return value if isinstance(value, torch.Tensor) else torch.from_numpy(value)


class _SideDie(Worker):
    """One side of a class's own _run_and_validate_l2 pair (SceneTestCase._run_own_l2): a fresh
    die whose every run takes prefetch `prefetch`, whatever the caller asks, each result kept in
    order (`results`)."""

    def __init__(self, prefetch: bool, **options):
        super().__init__(**options)
        self.side_prefetch, self.results = prefetch, []

    def run(self, handle, args, **options):
        options["prefetch"] = self.side_prefetch
        result = super().run(handle, args, **options)
        self.results.append(result)
        return result


class SceneTestCase:
    """Base of a scene test: CALLABLE, CASES, generate_args, compute_golden."""

    CALLABLE: dict = {}
    CASES: list = []
    RTOL = 1e-5
    ATOL = 1e-5
    SKIP_GOLDEN = False
    RUNTIME_ENV: dict = {}
    PFSIM_SET: dict = {}  # pfsim only: configuration overrides ({"l2.size": "96MiB"}) for every case
    # (`pfsim test --pfsim-set KEY=VALUE` adds to them for a session: SESSION_SET)

    def generate_args(self, params) -> TaskArgsBuilder:
        raise NotImplementedError(f"{type(self).__name__} must define generate_args(params)")

    def compute_golden(self, args, params) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define compute_golden(args, params)")

    def output_names(self, args: TaskArgsBuilder) -> list[str]:
        """The tensors compared: OUT and INOUT in the orchestration's signature (every tensor without one)."""
        callable_ = Callable(orchestration="", signature=self.CALLABLE.get("orchestration", {}).get("signature"))
        return [name for n, name in enumerate(args.tensor_names) if callable_.is_output(n)]

    def compare_outputs(self, test_args, golden_args, output_names, params) -> None:
        _compare_outputs(test_args, golden_args, output_names, self.RTOL, self.ATOL)

    # -- the run -------------------------------------------------------

    def _uses_sdma(self, request) -> bool:
        """Whether the case's worker has the async-DMA workspace: the sdma marker."""
        return request.node.get_closest_marker("sdma") is not None

    def _case(self, name: str) -> dict:
        return next(c for c in self.CASES if c["name"] == name)

    def _skip_reason(self, case: dict, request) -> str | None:
        """Why a case does not run under this session's options (None: it runs)."""
        opt = request.config.getoption
        chosen = _chosen_platform(request)
        platform = run_platform(case["platforms"], chosen)
        if platform is None:
            return platforms_skip_reason(case["platforms"], chosen)
        manual_mode = opt("--manual", default="exclude") or "exclude"
        manual = is_manual_for_platform(case.get("manual"), platform)
        if manual_mode == "exclude" and manual:
            return "a manual case (run with --manual include)"
        if manual_mode == "only" and not manual:
            return "not a manual case (--manual only)"
        selectors = [_parse_selector(s) for s in (opt("--case", default=None) or [])]
        if not _selected(type(self).__name__, case["name"], selectors):
            return "not selected by --case"
        return None

    def _build_config(self, config_dict, enable_chip_swimlane=0, enable_dump_args=False, enable_pmu=0,
                      enable_dep_gen=False, enable_scope_stats=False, *, output_prefix=""):
        """simpler's hook: a case's CallConfig with the diagnostics of one run and the folder they go
        to. The harness calls it before each run (a class overriding it sees them) and checks that
        what it returns asks for the diagnostics the options ask for (pfsim writes those)."""
        config = case_config({"config": config_dict}, type(self).__name__)
        config.enable_chip_swimlane = enable_chip_swimlane
        config.enable_dump_args = enable_dump_args
        config.enable_pmu = enable_pmu
        config.enable_dep_gen = enable_dep_gen
        config.enable_scope_stats = enable_scope_stats
        config.output_prefix = str(output_prefix) if output_prefix else ""
        return config

    def build_callable(self, platform: str = "a2a3sim") -> Callable:
        """simpler's hook: the class's CALLABLE as the callable a chip worker prepares
        (ChipWorker._register_callable_at_slot), its sources relative to the test's folder."""
        return Callable.from_dict(self.CALLABLE, self._st_dir)

    def _run_and_validate_l2(self, worker, callable_obj, case, rounds=1, skip_golden=False, enable_chip_swimlane=False,
                             enable_dump_args=False, enable_pmu=0, enable_dep_gen=False, enable_scope_stats=False,
                             output_prefix=""):
        """simpler's hook, run only when a class overrides it (_run_own_l2); pfsim's own runs
        of a case are _run_case's prefetch off/on pair."""
        raise NotImplementedError

    _DIAGNOSTIC_OPTIONS = ("--dump-args", "--enable-chip-swimlane", "--enable-scope-stats", "--enable-pmu",
                           "--enable-dep-gen", "--pfsim-trace")

    def _run_own_l2(self, case_name: str, request) -> None:
        """A class's own _run_and_validate_l2, called as simpler's harness calls it, once per
        prefetch setting, each time on a fresh die of its own whose every run takes that setting
        (_SideDie): the method's checks hold on both sides, and its k-th run off and its k-th run
        on are judged as a case's pair (bit-identical outputs; the gain summed over the runs).
        Diagnostics options are refused by name (its runs would not write them)."""
        case = self._case(case_name)
        what = f"{type(self).__name__}::{case_name}"
        opt = request.config.getoption
        asked = [o for o in self._DIAGNOSTIC_OPTIONS if opt(o, default=None)]
        if asked:
            pytest.fail(f"{what}: {asked[0]} is not written for a class's own _run_and_validate_l2 on pfsim",
                        pytrace=False)
        _warn_unmodelled_config(case.get("config", {}), what)
        platform = request.getfixturevalue("st_platform")
        skip_golden = self.SKIP_GOLDEN or case.get("skip_golden", False) or opt("--skip-golden", default=False)
        runs, walls, verdicts = {}, {}, []
        with _runtime_env(self.RUNTIME_ENV, self._st_dir):
            for prefetch in (False, True):
                with _SideDie(prefetch, enable_sdma=self._uses_sdma(request),
                              set={**self.PFSIM_SET, **SESSION_SET}) as die:
                    started = time.perf_counter()
                    try:
                        self._run_and_validate_l2(die, self.build_callable(platform), case,
                                                  rounds=int(opt("--rounds", default=1) or 1), skip_golden=skip_golden)
                    except Exception as e:
                        e.add_note(f"pfsim: {what}: in its own _run_and_validate_l2, prefetch "
                                   f"{'on' if prefetch else 'off'}")
                        raise
                    walls[prefetch] = time.perf_counter() - started
                    runs[prefetch] = die.results
                    if prefetch:
                        if len(runs[False]) != len(runs[True]):
                            pytest.fail(f"{what}: its own _run_and_validate_l2 ran {len(runs[False])} times with "
                                        f"prefetch off and {len(runs[True])} with prefetch on: no pair to judge",
                                        pytrace=False)
                        verdicts = [die.judge(off, on) for off, on in zip(runs[False], runs[True])]
        for k, verdict in enumerate(verdicts):
            if not verdict["equivalent"]:
                pytest.fail(f"{what}: run {k + 1} of its own _run_and_validate_l2: {verdict['failure']} "
                            "(the prefetch changed a value, or the result depends on timing)", pytrace=False)
        if not verdicts:
            return  # it ran nothing on the die: no pair
        off, on = runs[False], runs[True]
        outcome = CaseOutcome(sum(v["time_off_ns"] for v in verdicts), sum(v["time_on_ns"] for v in verdicts),
                              off[0].l2_hit_rate, on[0].l2_hit_rate)
        for key, value in (("pfsim_case", case_name), ("pfsim_time_off_ns", outcome.time_off_ns),
                           ("pfsim_time_on_ns", outcome.time_on_ns), ("pfsim_gain_pct", round(outcome.gain_pct, 3)),
                           ("pfsim_l2_hit_rate_off", round(outcome.l2_hit_rate_off, 4)),
                           ("pfsim_l2_hit_rate_on", round(outcome.l2_hit_rate_on, 4)),
                           ("pfsim_tasks", off[0].task_count), ("pfsim_runs", len(verdicts)),
                           ("pfsim_wall_off_s", round(walls[False], 3)), ("pfsim_wall_on_s", round(walls[True], 3))):
            request.node.user_properties.append((key, value))

    def _matching_cases(self, st_platform, request) -> list[dict]:
        """The cases that run in this session (simpler's name; pfsim selects by its own platform rule)."""
        return [c for c in self.CASES if self._skip_reason(c, request) is None]

    @staticmethod
    def _effective_enable_dep_gen(request) -> bool:
        """Whether deps.json is written (simpler's name): --enable-dep-gen."""
        return bool(request.config.getoption("--enable-dep-gen", default=False))

    def test_run(self, st_platform, st_worker, request):
        """Runs every matching case, each prefetch off and on on fresh dies (st_worker is
        not used: it is the die a class's own test methods drive). A class that
        defines its own test_run calls this through super()."""
        matched = self._matching_cases(st_platform, request)
        if not matched:
            pytest.skip(f"no case of {type(self).__name__} runs on pfsim with these options")
        for case in matched:
            if self._st_level == SceneTestLevel.NODE:
                self._run_case_l3(case["name"], request)
            else:
                self._run_case(case["name"], request)

    def _args_and_golden(self, case: dict, what: str, skip_golden: bool, check_dtypes: bool):
        """The case's params, its arguments (generate_args) and their golden
        (compute_golden on a clone, unless skipped); _CaseFailed naming the step
        that failed, or the params neither read."""
        params = _Params(case.get("params", {}))
        try:
            args = self.generate_args(params)
        except Exception as e:
            raise _CaseFailed(f"{what}: generate_args raised {type(e).__name__}: {e}") from None
        if not isinstance(args, TaskArgsBuilder):
            raise _CaseFailed(f"{what}: generate_args must return a TaskArgsBuilder, not {type(args).__name__}")
        if check_dtypes:
            for s in args.specs:
                if isinstance(s, TensorArg):
                    try:
                        _tensors.dtype_name(s.value, f"tensor '{s.name}'")
                    except TypeError as e:
                        raise _CaseFailed(f"{what}: {e}") from None
        golden = args.copy_on_write_clone()  # memory only for what compute_golden writes
        if not skip_golden:
            try:
                self.compute_golden(golden, params)
            except Exception as e:
                raise _CaseFailed(f"{what}: compute_golden raised {type(e).__name__}: {e}") from None
        golden.share_unchanged(args)  # an input it only read is not held twice
        unused = sorted(set(dict.keys(params)) - params.read)
        if unused:
            raise _CaseFailed(f"{what}: params {unused} are not used by generate_args or compute_golden")
        return params, args, golden

    def _run_case(self, case_name: str, request) -> CaseOutcome:
        """Runs one case prefetch off and on; pytest.fail naming the case and the cause."""
        failure = None
        try:
            return self._run_case_checked(case_name, request)
        except _CaseFailed as e:
            failure = str(e)
        pytest.fail(failure, pytrace=False)  # outside the handler: the cause is printed once

    def _run_case_checked(self, case_name: str, request) -> CaseOutcome:
        case = self._case(case_name)
        cls_name = type(self).__name__
        what = f"{cls_name}::{case_name}"
        opt = request.config.getoption
        rounds = int(opt("--rounds", default=1) or 1)
        skip_golden = self.SKIP_GOLDEN or case.get("skip_golden", False) or opt("--skip-golden", default=False)
        sdma = self._uses_sdma(request)

        _warn_unmodelled_config(case.get("config", {}), what)
        _warn_simulator_branch_on_board_case(case, run_platform(case["platforms"], _chosen_platform(request)),
                                             self.CALLABLE.get("incores", []), self._st_dir, what)
        rings = case.get("config", {}).get("runtime_env", {})  # checked at collection (case_config)
        threads = case.get("config", {}).get("aicpu_thread_num", 0)
        params, args, golden = self._args_and_golden(case, what, skip_golden, check_dtypes=True)

        callable_ = Callable.from_dict(self.CALLABLE, self._st_dir)
        missing = callable_.missing_sources()
        if missing:
            raise _CaseFailed(f"{what}: CALLABLE names a source that does not exist: {missing[0]}")
        outputs = self.output_names(args)
        written = [name for n, name in enumerate(args.tensor_names) if callable_.is_output(n)]  # by Worker.run
        trace_dir = opt("--pfsim-trace", default=None)
        dump_args = int(opt("--dump-args", default=0) or 0)
        swimlane = int(opt("--enable-chip-swimlane", default=0) or 0)
        scope_stats = bool(opt("--enable-scope-stats", default=False))
        pmu = int(opt("--enable-pmu", default=0) or 0)
        dep_gen = bool(opt("--enable-dep-gen", default=False))
        overhead = bool(swimlane and opt("--enable-swimlane-overhead", default=False))
        prefix = (_diagnostics.output_prefix(_outputs_dir(), f"{cls_name}_{case_name}")
                  if dump_args or swimlane or scope_stats or pmu or dep_gen else None)
        ranges = {}  # each parameter's plausible range, as the device reports it

        def pair(overrides: dict, diagnose: bool):
            """The case prefetch off and on with `overrides` over PFSIM_SET and --pfsim-set, diagnostics
            only when `diagnose`: (outcome, the off run's result, wall seconds off and on), or _CaseFailed."""
            runs, walls = {}, {}  # the first round's result and wall seconds, off and on
            for prefetch in (False, True):
                try:
                    with Worker(enable_sdma=sdma, set={**self.PFSIM_SET, **SESSION_SET, **overrides}) as worker:
                        ranges.update(worker.ranges)
                        handle = worker.register(callable_)
                        for r in range(rounds):
                            run_args = args.fresh_outputs(written)
                            trace = None
                            if trace_dir and diagnose:
                                os.makedirs(trace_dir, exist_ok=True)
                                trace = os.path.join(trace_dir, f"{cls_name}.{case_name}.{'on' if prefetch else 'off'}"
                                                     f"{'' if rounds == 1 else f'.{r}'}.json")
                            spans = diagnose and bool(swimlane or pmu)
                            diagnostics = {"spans": spans, "tasks": spans}  # records only where read (#49)
                            if dump_args and diagnose:
                                diagnostics.update(dump_args=dump_args,
                                                   dump_dir=str(_diagnostics.run_dir(prefix, prefetch) / "args_dump"))
                            if scope_stats and diagnose:
                                diagnostics["scope_stats_dir"] = str(_diagnostics.run_dir(prefix, prefetch) /
                                                                     "scope_stats")
                            if dep_gen and diagnose:
                                diagnostics["deps_json"] = str(_diagnostics.run_dir(prefix, prefetch) / "deps.json")
                            asked = (swimlane, dump_args, pmu, dep_gen, scope_stats)
                            built = self._build_config(case.get("config", {}), *asked, output_prefix=str(
                                _diagnostics.run_dir(prefix, prefetch)) if prefix else "")
                            got = tuple(getattr(built, f"enable_{k}") for k in
                                        ("chip_swimlane", "dump_args", "pmu", "dep_gen", "scope_stats"))
                            if got != asked:
                                raise _CaseFailed(f"{what}: {cls_name}._build_config returns diagnostics {got} "
                                                  f"(swimlane, dump_args, pmu, dep_gen, scope_stats) where the "
                                                  f"options ask for {asked}: pfsim writes what the options ask")
                            started = time.perf_counter()
                            # Judged by digests: the outputs' SHA-256 was 12 % of a large run's CPU (#49).
                            result = worker.run(handle, run_args, prefetch=prefetch, trace=trace,
                                                aicpu_thread_num=threads, output_hash="digest", **rings,
                                                **diagnostics)
                            walls.setdefault(prefetch, time.perf_counter() - started)
                            if swimlane and diagnose:
                                records = _diagnostics.run_dir(prefix, prefetch) / "chip_swimlane_records.json"
                                _diagnostics.write_swimlane(records, result, swimlane)
                            if pmu and diagnose:
                                (_diagnostics.run_dir(prefix, prefetch) / "pmu.csv").write_text(
                                    _diagnostics.pmu_csv(result, pmu, worker.config["chip.clock"]))
                                unmodelled = _diagnostics.pmu_early_warning(result)
                                if unmodelled:
                                    _warn_once("--enable-pmu early dispatch", unmodelled)
                            if dep_gen and diagnose:
                                unwritten = _diagnostics.deps_viewer_text(Path(diagnostics["deps_json"]))
                                if unwritten:
                                    _warn_once("--enable-dep-gen", unwritten)
                            if overhead and diagnose:
                                unwritten = _diagnostics.overhead_trace(records)
                                if unwritten:
                                    _warn_once("--enable-swimlane-overhead", unwritten)
                            label = f"prefetch {'on' if prefetch else 'off'}" + ("" if rounds == 1 else f", round {r}")
                            if not skip_golden:
                                try:
                                    self.compare_outputs(run_args, golden, outputs, params)
                                except AssertionError as e:
                                    raise _CaseFailed(f"{what} ({label}): {e}") from None
                            runs.setdefault(prefetch, result)
                            # The outputs are compared: the device judges off against on by their hashes.
                            del run_args
                        if prefetch:  # the pair's verdict: pfsim check's (session/verdict.h), by the device
                            verdict = worker.judge(runs[False], runs[True])
                except CompileError as e:
                    raise _CaseFailed(f"{what}: a source does not compile:\n{e}") from None
                except RunError as e:
                    raise _CaseFailed(f"{what} (prefetch {'on' if prefetch else 'off'}): {e}") from None
                except (ValueError, TypeError, RuntimeError, OverflowError) as e:
                    raise _CaseFailed(f"{what}: {e}") from None
            if not verdict["equivalent"]:
                raise _CaseFailed(f"{what}: {verdict['failure']} "
                                  "(the prefetch changed a value, or the result depends on timing)")
            off, on = runs[False], runs[True]
            outcome = CaseOutcome(verdict["time_off_ns"], verdict["time_on_ns"], off.l2_hit_rate, on.l2_hit_rate)
            return outcome, off, walls

        with _runtime_env(self.RUNTIME_ENV, self._st_dir):
            outcome, off, walls = pair({}, diagnose=True)
            band = _band_of(outcome, opt("--pfsim-uncertainty", default=None), ranges,
                            lambda sets: pair(sets, diagnose=False)[0])
        for key, value in (("pfsim_case", case_name), ("pfsim_time_off_ns", outcome.time_off_ns), ("pfsim_time_on_ns", outcome.time_on_ns),
                           ("pfsim_gain_pct", round(outcome.gain_pct, 3)),
                           ("pfsim_l2_hit_rate_off", round(outcome.l2_hit_rate_off, 4)),
                           ("pfsim_l2_hit_rate_on", round(outcome.l2_hit_rate_on, 4)),
                           ("pfsim_tasks", off.task_count),
                           ("pfsim_wall_off_s", round(walls[False], 3)), ("pfsim_wall_on_s", round(walls[True], 3))):
            request.node.user_properties.append((key, value))
        _record_band(request, band)
        return outcome

    # -- level 3 ---------------------------------------------------------

    @classmethod
    def _l3_shape(cls) -> tuple[int, int]:
        """The L3 worker a class's cases need: the most dies and sub-workers any case asks for."""
        shapes = [l3_shape(c.get("config", {}), cls.__name__) for c in cls.CASES] or [(1, 0)]
        return max(d for d, _ in shapes), max(n for _, n in shapes)

    @classmethod
    def _l3_worker(cls, enable_sdma: bool, device_count: int | None = None, num_sub_workers: int | None = None,
                   overrides: dict | None = None):
        """A level-3 worker with the class's chip and sub callables registered:
        (worker, CallableNamespace); the handles also as cls._st_chip_handles and
        cls._st_sub_handles, as simpler's harness sets them. overrides: settings
        over PFSIM_SET and --pfsim-set (an end of a plausible range)."""
        from .level3 import L3Worker

        devices, subs = cls._l3_shape()
        worker = L3Worker(device_count=device_count or devices,
                          num_sub_workers=subs if num_sub_workers is None else num_sub_workers,
                          enable_sdma=enable_sdma, set={**cls.PFSIM_SET, **SESSION_SET, **(overrides or {})})
        try:
            entries, chips, subs_ = {}, {}, {}
            for entry in cls.CALLABLE.get("callables", []):
                if "orchestration" in entry:
                    chip = Callable.from_dict(entry, cls._st_dir)
                    missing = chip.missing_sources()
                    if missing:
                        raise FileNotFoundError(f"{cls.__name__}: callable '{entry['name']}' names a source that does "
                                                f"not exist: {missing[0]}")
                    chips[entry["name"]] = worker.register(chip)
                    entries[f"{entry['name']}_sig"] = entry["orchestration"].get("signature", [])
                else:
                    subs_[entry["name"]] = worker.register_sub(entry["callable"], entry["name"])
            entries.update(chips)
            entries.update(subs_)
            cls._st_chip_handles, cls._st_sub_handles = chips, subs_
        except BaseException:
            worker.close()
            raise
        return worker, CallableNamespace(entries)

    def _run_case_l3(self, case_name: str, request) -> CaseOutcome:
        failure = None
        try:
            return self._run_case_l3_checked(case_name, request)
        except _CaseFailed as e:
            failure = str(e)
        pytest.fail(failure, pytrace=False)

    def _run_case_l3_checked(self, case_name: str, request) -> CaseOutcome:
        """A level-3 case, prefetch off and on, each on fresh dies: the orchestration
        function records the graph, pfsim.level3 runs it; every tensor is compared
        with the golden (as simpler's level 3 does), and the device judges the pair
        as level 2's is judged (L3Worker.judge: every call's tensors off against on,
        the time and the gain)."""
        case = self._case(case_name)
        cls_name = type(self).__name__
        what = f"{cls_name}::{case_name}"
        opt = request.config.getoption
        rounds = int(opt("--rounds", default=1) or 1)
        skip_golden = self.SKIP_GOLDEN or case.get("skip_golden", False) or opt("--skip-golden", default=False)
        sdma = request.node.get_closest_marker("sdma") is not None
        if opt("--pfsim-trace", default=None):
            _warn_once("--pfsim-trace", f"{what}: --pfsim-trace: a level-3 run writes no trace yet (not modelled "
                                        "on several dies); the case runs without one")
        _warn_unmodelled_config(case.get("config", {}), what, level3=True)
        config = case_config(case, f"{what}", SceneTestLevel.NODE)
        devices, subs = l3_shape(case.get("config", {}), what)
        params, args, golden = self._args_and_golden(case, what, skip_golden, check_dtypes=False)
        orch_fn = self.CALLABLE.get("orchestration")
        names = args.tensor_names
        ranges = {}  # each parameter's plausible range, as the device reports it

        def pair(overrides: dict):
            """The case prefetch off and on with `overrides` over PFSIM_SET and --pfsim-set:
            (outcome, the off run's waves, wall seconds off and on), or _CaseFailed."""
            runs, walls, hosts = {}, {}, {}  # the waves, wall seconds and host tensors' hashes, off and on
            verdict = None
            for prefetch in (False, True):
                label = f"prefetch {'on' if prefetch else 'off'}"
                try:
                    worker, ns = type(self)._l3_worker(sdma, devices, subs, overrides)
                    with worker:
                        ranges.update(worker.ranges)
                        run_args = args.clone()
                        rehosted = _rehost(worker, run_args)
                        initial = {n: getattr(run_args, n).clone() for n in names} if rounds > 1 else {}
                        waves = []
                        for r in range(rounds):
                            for n, v in initial.items():
                                getattr(run_args, n).copy_(v)
                            started = time.perf_counter()
                            waves = worker.run(lambda orch, _a, _c: orch_fn(orch, ns, run_args, config),
                                               prefetch=prefetch)
                            walls.setdefault(prefetch, time.perf_counter() - started)
                            if not skip_golden:
                                try:
                                    self.compare_outputs(run_args, golden, names, params)
                                except AssertionError as e:
                                    where = label + ("" if rounds == 1 else f", round {r}")
                                    raise _CaseFailed(f"{what} ({where}): {e}") from None
                        runs[prefetch] = waves
                        hosts[prefetch] = worker.host_hashes(rehosted)
                        del rehosted, run_args
                        if prefetch:  # the pair's verdict: pfsim check's (session/verdict.h), by the device
                            verdict = worker.judge(runs[False], runs[True], host=(hosts[False], hosts[True]))
                except CompileError as e:
                    raise _CaseFailed(f"{what}: a source does not compile:\n{e}") from None
                except RunError as e:
                    raise _CaseFailed(f"{what} ({label}): {e}") from None
                except (ValueError, TypeError, RuntimeError, OverflowError, FileNotFoundError, KeyError) as e:
                    raise _CaseFailed(f"{what}: {type(e).__name__}: {e}") from None
            if not verdict["equivalent"]:
                raise _CaseFailed(f"{what}: {verdict['failure']} "
                                  "(the prefetch changed a value, or the result depends on timing)")
            off, on = runs[False], runs[True]
            outcome = CaseOutcome(verdict["time_off_ns"], verdict["time_on_ns"], _waves_hit_rate(off),
                                  _waves_hit_rate(on))
            return outcome, off, walls

        with _runtime_env(self.RUNTIME_ENV, self._st_dir):
            outcome, off, walls = pair({})
            band = _band_of(outcome, opt("--pfsim-uncertainty", default=None), ranges, lambda sets: pair(sets)[0])
        for key, value in (("pfsim_case", case_name), ("pfsim_time_off_ns", outcome.time_off_ns),
                           ("pfsim_time_on_ns", outcome.time_on_ns), ("pfsim_gain_pct", round(outcome.gain_pct, 3)),
                           ("pfsim_l2_hit_rate_off", round(outcome.l2_hit_rate_off, 4)),
                           ("pfsim_l2_hit_rate_on", round(outcome.l2_hit_rate_on, 4)),
                           ("pfsim_tasks", sum(len(res.tasks) for w in off for _, res in w.results)),
                           ("pfsim_ranks", devices),
                           ("pfsim_wall_off_s", round(walls[False], 3)), ("pfsim_wall_on_s", round(walls[True], 3))):
            request.node.user_properties.append((key, value))
        _record_band(request, band)
        return outcome

    @staticmethod
    def run_module(module_name: str) -> None:
        """`python test_x.py [-p PLATFORM] [--case SEL] [--manual MODE] [--rounds N]`: runs the module's scene tests."""
        import argparse

        parser = argparse.ArgumentParser()
        parser.add_argument("-p", "--platform", default="a2a3")
        parser.add_argument("-d", "--device", default="0")
        parser.add_argument("--case", action="append", default=[])
        parser.add_argument("--manual", default="exclude", choices=["exclude", "include", "only"])
        parser.add_argument("--rounds", type=int, default=1)
        ns = parser.parse_args()
        path = os.path.abspath(sys.modules[module_name].__file__)
        argv = [path, "-p", "pfsim.plugin", "--platform", ns.platform, "--manual", ns.manual, "--rounds", str(ns.rounds)]
        for c in ns.case:
            argv += ["--case", c]
        sys.exit(pytest.main(argv))


# -- the helpers simpler's tests import from simpler_setup.scene_test -----------


def _build_chip_task_args(test_args: TaskArgsBuilder, orch_signature: list):
    """(the arguments ChipWorker._run_slot takes, the names of the outputs it writes back):
    the TaskArgsBuilder itself (its tensors written in place) and the tensors that are
    OUT or INOUT in `orch_signature` (every tensor when it is empty)."""
    probe = Callable(orchestration="", signature=list(orch_signature) or None)
    return test_args, [n for i, n in enumerate(test_args.tensor_names) if probe.is_output(i)]


def _build_l2_ref_args(test_args: TaskArgsBuilder, orch_signature: list, worker=None):
    """(the arguments Worker.run takes, the names of its OUT and INOUT tensors), as
    _build_chip_task_args gives them: pfsim's Worker.run takes the TaskArgsBuilder itself
    (`worker` is not needed). ValueError for a tensor the signature has no direction for."""
    if len(test_args.tensor_names) > len(orch_signature):
        name = test_args.tensor_names[len(orch_signature)]
        raise ValueError(f"tensor '{name}' (argument {len(orch_signature)}) has no direction in the orchestration's "
                         f"signature of {len(orch_signature)}: extend CALLABLE['orchestration']['signature']")
    return _build_chip_task_args(test_args, orch_signature)


def _compare_outputs(test_args, golden_args, output_names, rtol, atol) -> None:
    """AssertionError naming the first output off the golden: |actual - expected| <=
    atol + rtol * |expected| everywhere (NaN only where the golden has NaN)."""
    for name in output_names:
        actual, expected = _as_torch(getattr(test_args, name)), _as_torch(getattr(golden_args, name))
        if actual.shape != expected.shape or actual.dtype != expected.dtype:
            raise AssertionError(f"output '{name}': {actual.dtype}{list(actual.shape)} where the golden is "
                                 f"{expected.dtype}{list(expected.shape)}")
        # In pieces: an output of hundreds of MB widened to double at once would take several times its size.
        actual, expected = actual.reshape(-1), expected.reshape(-1)
        if all(_close(actual[i:i + _PIECE], expected[i:i + _PIECE], rtol, atol)
               for i in range(0, actual.numel(), _PIECE)):
            continue
        largest, worst = float("-inf"), 0
        for i in range(0, actual.numel(), _PIECE):
            diff = (actual[i:i + _PIECE].double() - expected[i:i + _PIECE].double()).abs().nan_to_num(nan=float("inf"))
            at = int(diff.argmax())
            if float(diff[at]) > largest:
                largest, worst = float(diff[at]), i + at
        raise AssertionError(
            f"output '{name}' differs from the golden: largest difference {largest:g} at "
            f"element {worst} (got {float(actual[worst]):g}, expected {float(expected[worst]):g}; "
            f"rtol={rtol}, atol={atol})")


_PIECE = 1 << 15  # elements compared at a time (256 KiB of doubles: they stay in the host's cache)


def _doubles(t):
    """A torch tensor's values as a numpy float64 array (exact: every dtype compared widens exactly)."""
    import numpy as np
    import torch

    if t.dtype == torch.bfloat16:  # numpy has no bfloat16
        return t.detach().double().numpy()
    return t.detach().numpy().astype(np.float64)


def _close(actual, expected, rtol, atol) -> bool:
    """|actual - expected| <= atol + rtol * |expected| everywhere, NaN only where expected has NaN:
    widened to double by torch (exactly), compared by numpy (the same IEEE double operations;
    without torch's thread pool, whose start and stop per operation cost more than the work)."""
    import numpy as np

    a, e = _doubles(actual), _doubles(expected)
    a_nan, e_nan = np.isnan(a), np.isnan(e)
    if not np.array_equal(a_nan, e_nan):
        return False
    diff = np.abs(a - e)
    bound = np.abs(e)
    bound *= rtol
    bound += atol
    return bool((a_nan | (diff <= bound)).all())


def _sanitize_for_filename(text: str) -> str:
    """`text` with every character but letters, digits, '.', '_' and '-' made '_'."""
    return "".join(c if c.isalnum() or c in "._-" else "_" for c in text)


def _outputs_dir() -> Path:
    """Where diagnostics outputs go (--dump-args): $PFSIM_OUTPUTS, else ./outputs."""
    return Path(os.environ.get("PFSIM_OUTPUTS") or "outputs").resolve()


# -- level 3: the graph's figures, the host tensors moved into buffers, simpler's helpers ----------


_warned_once = set()


def _warn_once(key: str, message: str) -> None:
    if key not in _warned_once:
        _warned_once.add(key)
        print(f"pfsim: warning: {message}", file=sys.stderr)


def _waves_hit_rate(waves) -> float:
    """The L2 hit rate over every die of every wave (hits over accesses)."""
    hits = accesses = 0
    for w in waves:
        for _, res in w.results:
            l2 = res.counters.get("l2", {})
            hits += l2.get("hits", 0)
            accesses += l2.get("hits", 0) + l2.get("misses", 0)
    return hits / accesses if accesses else 0.0


class CallableNamespace:
    """The callables an L3 orchestration function gets: `ns.NAME` a chip callable's
    handle (or a sub callable's), `ns.NAME_sig` its signature; keep(...) holds
    objects for the run (pfsim's TaskArgs need no keeping: kept all the same)."""

    def __init__(self, entries: dict):
        self._entries = dict(entries)
        self._kept = []

    def __getattr__(self, name: str):
        try:
            return self._entries[name]
        except KeyError:
            raise AttributeError(f"no callable named '{name}' (CALLABLE['callables'] names: "
                                 f"{sorted(k for k in self._entries if not k.endswith('_sig'))})") from None

    def keep(self, *objs):
        self._kept.extend(objs)
        return objs[0] if len(objs) == 1 else (objs or None)


def _check_l3_callable(cls, where: str) -> None:
    spec = cls.CALLABLE
    unknown = set(spec) - {"orchestration", "callables"}
    if unknown:
        raise ValueError(f"{where}: a level-3 CALLABLE takes 'orchestration' (a Python function) and 'callables', "
                         f"not '{sorted(unknown)[0]}'")
    if "orchestration" in spec and not callable(spec["orchestration"]):
        raise ValueError(f"{where}: a level-3 CALLABLE's 'orchestration' is a Python function "
                         "(orch, callables, task_args, config)")
    for i, entry in enumerate(spec.get("callables", [])):
        if "name" not in entry or ("orchestration" in entry) == ("callable" in entry):
            raise ValueError(f"{where}: CALLABLE['callables'][{i}] needs a name and either an 'orchestration' "
                             "(a chip callable) or a 'callable' (a sub callable)")


def _rehost(worker, args: TaskArgsBuilder) -> dict:
    """Moves each tensor of `args` into a buffer of `worker` (create_buffer) and
    rebinds `args` to a torch view of it: what the chips write, the test reads.
    The buffers by tensor name (also args._rehost_handles)."""
    import torch

    handles = {}
    for i, spec in enumerate(args.specs):
        if not isinstance(spec, TensorArg):
            continue
        t = _as_torch(spec.value)
        if t.numel() == 0:
            continue
        if not t.is_contiguous() or t.device.type != "cpu":
            raise ValueError(f"tensor '{spec.name}': a level-3 tensor must be a contiguous CPU tensor (it moves into "
                             "a host buffer the dies map)")
        buffer = worker.create_buffer(t.numel() * t.element_size())
        buffer.name = spec.name  # the results' and the verdict's name for it
        view = torch.frombuffer(buffer.shm.buf, dtype=t.dtype, count=t.numel()).view(t.shape)
        view.copy_(t)
        args.specs[i] = TensorArg(spec.name, view)
        handles[spec.name] = buffer
    object.__setattr__(args, "_rehost_handles", handles)
    return handles


def _data_type(tensor):
    from .task_interface import DataType

    return DataType[_tensors.dtype_name(tensor, "tensor").upper()]


def _rehosted_buffer_for(test_args: TaskArgsBuilder, tensor):
    """The host buffer a level-3 case's tensor was moved into (matched by address)."""
    base = int(tensor.data_ptr())
    for handle in getattr(test_args, "_rehost_handles", {}).values():
        if handle.base == base:
            return handle
    raise ValueError("this tensor was not moved into a host buffer of the level-3 worker (no buffer at its address)")


def _rehosted_ref_for(test_args: TaskArgsBuilder, tensor):
    """A task argument's tensor over the host buffer `tensor` was moved into."""
    return _rehosted_buffer_for(test_args, tensor).tensor(tuple(tensor.shape), _data_type(tensor))


def _rehosted_ref(test_args: TaskArgsBuilder, name: str):
    """A task argument's tensor over the host buffer the tensor `name` was moved into."""
    handle = getattr(test_args, "_rehost_handles", {}).get(name)
    if handle is None:
        raise ValueError(f"tensor '{name}' was not moved into a host buffer of the level-3 worker")
    t = getattr(test_args, name)
    return handle.tensor(tuple(t.shape), _data_type(t))


def _l3_ref(test_args: TaskArgsBuilder, name: str, worker=None):
    return _rehosted_ref(test_args, name)


def _build_l3_task_args(test_args: TaskArgsBuilder, orch_signature: list, worker=None):
    """(TaskArgs, output names) of a level-3 case's arguments for one chip task:
    each tensor tagged by its direction in `orch_signature` (IN: INPUT, OUT:
    OUTPUT_EXISTING, INOUT: INOUT), then the scalars."""
    from .task_interface import TaskArgs, TensorArgType, scalar_to_uint64

    tags = {ArgDirection.IN: TensorArgType.INPUT, ArgDirection.OUT: TensorArgType.OUTPUT_EXISTING,
            ArgDirection.INOUT: TensorArgType.INOUT}
    out, outputs, n = TaskArgs(), [], 0
    for spec in test_args.specs:
        if isinstance(spec, TensorArg):
            if n >= len(orch_signature):
                raise ValueError(f"tensor '{spec.name}' (argument {n}) has no entry in the orchestration's signature "
                                 f"(length {len(orch_signature)})")
            direction = ArgDirection(int(orch_signature[n]))
            out.add_tensor(_rehosted_ref(test_args, spec.name), tags.get(direction, TensorArgType.INPUT))
            if direction in (ArgDirection.OUT, ArgDirection.INOUT):
                outputs.append(spec.name)
            n += 1
        else:
            out.add_scalar(scalar_to_uint64(spec.value))
    return out, outputs


# -- scene tests derived from case files -------------------------------------

def describe_case_file(path: str, args: dict | None = None, out: str | None = None) -> dict:
    """What a case file describes (`pfsim case-data`): its callable, tensors and
    scalars, after `args` (--arg NAME=VALUE); with `out`, also each tensor's
    initial values (NAME.npy) and each output's golden (NAME.golden.npy) written
    there, by the code a run of the case uses. ValueError with pfsim's message."""
    import json
    import subprocess

    from ._device import find_binary

    cmd = [find_binary(), "case-data", path]
    for key, value in (args or {}).items():
        cmd += ["--arg", f"{key}={value}"]
    if out:
        cmd += ["--out", out]
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise ValueError(done.stderr.strip() or f"{' '.join(cmd)}: exit {done.returncode}")
    return json.loads(done.stdout)


def _load_npy(path: str, dtype: str):
    """A .npy `pfsim case-data` wrote as a torch tensor (bfloat16's raw <u2 bits as bfloat16)."""
    import numpy as np
    import torch

    array = np.load(path)
    if dtype == "bfloat16":
        return torch.from_numpy(array.view(np.int16)).view(torch.bfloat16)
    return torch.from_numpy(array)


def _case_callable(described: dict) -> dict:
    """A scene test's CALLABLE for the callable a case file describes."""
    orch = described["orchestration"]
    incores = [dict(k) for k in described["incores"]]
    if described["include_dirs"] and incores:  # the Callable takes every incore's extra dirs for all sources
        incores[0]["extra_include_dirs"] = described["include_dirs"]
    return {"orchestration": {"source": orch["source"], "function_name": orch["function"],
                              "config_name": orch["config"],
                              "signature": [ArgDirection.OUT if t["output"] else ArgDirection.IN
                                            for t in described["tensors"]]},
            "incores": incores}


class CaseFileTest(SceneTestCase):
    """A scene test whose description is its folder's case files (docs/cases.md):
    CASE_FILES names them, each "case.toml" or {"file": ..., "name": ..., "args":
    {NAME: VALUE}} (`--arg` values; "name" defaults to the case file's). The
    class's CALLABLE, CASES, the sdma marker and each output's tolerance come from
    them, and so, unless the class writes its own, do generate_args (each
    tensor's initial values, each scalar) and compute_golden (each output's
    golden, a [golden] source's included), made by `pfsim case-data` with the
    code `pfsim run CASE` uses. A class that computes values a case file cannot
    say (torch goldens) writes its own generate_args and compute_golden and gives
    each entry its "params"; the case file then names the .npy files they write
    (tools/case_data.py), and every run checks that the arguments are the ones
    the case file declares (names, dtypes, shapes, scalars' bits)."""

    CASE_FILES: list = []

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if not cls.CASE_FILES:
            return
        where = f"{cls.__module__}.{cls.__name__}"
        for own in ("CALLABLE", "CASES", "RTOL", "ATOL"):
            if own in vars(cls):
                raise ValueError(f"{where}: a CaseFileTest takes {own} from its CASE_FILES; it may not write its own")
        folder = os.path.dirname(os.path.abspath(sys.modules[cls.__module__].__file__))
        own_values = cls.generate_args is not CaseFileTest.generate_args
        if own_values != (cls.compute_golden is not CaseFileTest.compute_golden):
            raise ValueError(f"{where}: writes one of generate_args and compute_golden: both or neither")
        cls._case_files, cls.CASES = {}, []
        callable_ = sdma = None
        for i, entry in enumerate(cls.CASE_FILES):
            entry = {"file": entry} if isinstance(entry, str) else dict(entry)
            unknown = set(entry) - {"file", "name", "args", "params"}
            if unknown or "file" not in entry:
                raise ValueError(f"{where}: CASE_FILES[{i}]: takes file, name, args, params"
                                 f"{f' (not {sorted(unknown)[0]})' if unknown else ' (file is missing)'}")
            if "params" in entry and not own_values:
                raise ValueError(f"{where}: CASE_FILES[{i}]: params are for a class's own generate_args; "
                                 "a case file's values take args")
            path = os.path.join(folder, entry["file"])
            try:
                described = describe_case_file(path, entry.get("args"))
            except ValueError as e:
                raise ValueError(f"{where}: CASE_FILES[{i}]: {e}") from None
            name = entry.get("name", described["name"])
            this = _case_callable(described)
            if callable_ not in (None, this) or sdma not in (None, described["enable_sdma"]):
                raise ValueError(f"{where}: CASE_FILES[{i}] ({entry['file']}) describes another callable or "
                                 "enable_sdma than the entries before it: one class runs one callable")
            callable_, sdma = this, described["enable_sdma"]
            cls._case_files[name] = (path, entry.get("args", {}), described)
            cls.CASES.append({"name": name, "platforms": ["a2a3"],
                              "params": entry.get("params", {}) if own_values else entry.get("args", {})})
        cls.CALLABLE = callable_
        if sdma:
            pytest.mark.sdma(cls)

    def _uses_sdma(self, request) -> bool:
        described = self._case_files[self._case_name][2]
        if request.node.get_closest_marker("sdma") is not None and not described["enable_sdma"]:
            raise _CaseFailed(f"{type(self).__name__}::{self._case_name}: marked sdma, but its case file says "
                              "enable_sdma = false")
        return described["enable_sdma"]

    def _run_case_checked(self, case_name: str, request) -> CaseOutcome:
        self._case_name = case_name
        return super()._run_case_checked(case_name, request)

    def _args_and_golden(self, case: dict, what: str, skip_golden: bool, check_dtypes: bool):
        params, args, golden = super()._args_and_golden(case, what, skip_golden, check_dtypes)
        mismatch = self._differs_from_case_file(args)
        if mismatch:
            raise _CaseFailed(f"{what}: {mismatch}")
        return params, args, golden

    def _differs_from_case_file(self, args: TaskArgsBuilder) -> str | None:
        """What of `args` the case file declares otherwise (None: nothing)."""
        path, _, described = self._case_files[self._case_name]
        file = os.path.basename(path)
        declared = [t["name"] for t in described["tensors"]] + [s["name"] for s in described["scalars"]]
        if [s.name for s in args.specs] != declared:
            return f"arguments {[s.name for s in args.specs]}, where {file} declares {declared}"
        for t in described["tensors"]:
            value = getattr(args, t["name"])
            dtype, shape = _tensors.dtype_name(value, t["name"]), list(value.shape)
            if (dtype, shape) != (t["dtype"], t["shape"]):
                return f"tensor '{t['name']}' is {dtype}{shape}, where {file} declares {t['dtype']}{t['shape']}"
        for s in described["scalars"]:
            bits = _tensors.scalar_bits(getattr(args, s["name"]), s["name"])
            if bits != s["bits"]:
                return f"scalar '{s['name']}' is {bits:#x}, where {file} declares {s['bits']:#x}"
        return None

    def generate_args(self, params) -> TaskArgsBuilder:
        import ctypes
        import shutil
        import tempfile

        path, _, described = self._case_files[self._case_name]
        args = dict(params.items())
        folder = tempfile.mkdtemp(prefix="pfsim-case-data-")
        try:
            describe_case_file(path, args, folder)
            built = TaskArgsBuilder()
            self._goldens = {}
            for t in described["tensors"]:
                for kind in ("", ".golden") if t["output"] else ("",):
                    value = _load_npy(os.path.join(folder, f"{t['name']}{kind}.npy"), t["dtype"])
                    if kind:
                        self._goldens[t["name"]] = value
                    else:
                        built.add_tensor(t["name"], value)
            for s in described["scalars"]:
                built.add_scalar(s["name"], ctypes.c_uint64(s["bits"]))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        return built

    def compute_golden(self, args, params) -> None:
        for name, value in self._goldens.items():
            getattr(args, name).copy_(value)

    def output_names(self, args: TaskArgsBuilder) -> list[str]:
        return [t["name"] for t in self._case_files[self._case_name][2]["tensors"] if t["output"]]

    def compare_outputs(self, test_args, golden_args, output_names, params) -> None:
        """Each output within its own tolerance, as the case file gives it."""
        tolerances = {t["name"]: (t["rtol"], t["atol"]) for t in self._case_files[self._case_name][2]["tensors"]}
        for name in output_names:
            _compare_outputs(test_args, golden_args, [name], *tolerances[name])

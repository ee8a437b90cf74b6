"""Scene tests on pfsim: the shape and semantics of simpler's level-2 harness.

A scene test written for simpler runs here after changing only its imports:

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
from contextlib import contextmanager
from enum import IntEnum
from typing import Any, NamedTuple

import pytest

from . import ArgDirection, Callable, CompileError, RunError, Worker, _tensors

__all__ = ["SceneTestCase", "TaskArgsBuilder", "TensorArg", "Scalar", "scene_test", "ArgDirection",
           "SceneTestLevel", "CaseOutcome"]

PLATFORMS = ("a2a3", "a2a3sim")  # pfsim simulates a2a3; cases for either run
CASE_KEYS = {"name", "platforms", "manual", "config", "params", "skip_golden"}
CONFIG_KEYS = {"aicpu_thread_num", "runtime_env", "device_count", "num_sub_workers"}  # simpler's
# What pfsim does not model of a case's config, warned once per process on stderr when a case sets it.
UNMODELLED_CONFIG = {
    "aicpu_thread_num": "not modelled: pfsim schedules with one simulated AICPU scheduler, whatever the count",
    "runtime_env.ring_task_window": "not modelled: pfsim's task ring is unbounded (the orchestrator never waits "
                                    "for a slot)",
    "runtime_env.ring_heap": "each ring's capacity is enforced, but the orchestrator's wait for an ended scope's "
                             "outputs to be given back is not modelled (it takes no time)",
    "runtime_env.ring_dep_pool": "not modelled: pfsim's dependency lists are unbounded",
}
_warned_config = set()


def _warn_unmodelled_config(config: dict, where: str) -> None:
    names = [k for k in config if k != "runtime_env"]
    names += [f"runtime_env.{k}" for k in config.get("runtime_env", {})]
    for name in names:
        if name in UNMODELLED_CONFIG and name not in _warned_config:
            _warned_config.add(name)
            print(f"pfsim: warning: {where}: config {name}: {UNMODELLED_CONFIG[name]}",
                  file=sys.stderr)


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


def scene_test(level, runtime: str):
    """Marks a SceneTestCase: one pytest test per case, parametrized by name."""

    def decorator(cls):
        where = f"{cls.__module__}.{cls.__name__}"
        if int(level) != SceneTestLevel.CHIP:
            raise ValueError(f"{where}: pfsim runs level-2 (single-chip) scene tests, not level {int(level)}")
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
            bad = set(case.get("config", {})) - CONFIG_KEYS
            if bad:
                raise ValueError(f"{where}: case {case['name']}: unknown config key '{sorted(bad)[0]}'")
            if case["name"] in names:
                raise ValueError(f"{where}: case name '{case['name']}' repeats")
            names.append(case["name"])
        cls._st_level = int(level)
        cls._st_runtime = runtime
        cls._st_dir = os.path.dirname(os.path.abspath(inspect.getfile(cls)))

        @pytest.mark.parametrize("case_name", names)
        def test_run(self, case_name, request):
            self._run_case(case_name, request)

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


class SceneTestCase:
    """Base of a scene test: CALLABLE, CASES, generate_args, compute_golden."""

    CALLABLE: dict = {}
    CASES: list = []
    RTOL = 1e-5
    ATOL = 1e-5
    SKIP_GOLDEN = False
    RUNTIME_ENV: dict = {}
    PFSIM_SET: dict = {}  # pfsim only: configuration overrides ({"l2.size": "96MiB"}) for every case

    def generate_args(self, params) -> TaskArgsBuilder:
        raise NotImplementedError(f"{type(self).__name__} must define generate_args(params)")

    def compute_golden(self, args, params) -> None:
        raise NotImplementedError(f"{type(self).__name__} must define compute_golden(args, params)")

    def output_names(self, args: TaskArgsBuilder) -> list[str]:
        """The tensors compared: OUT and INOUT in the orchestration's signature (every tensor without one)."""
        callable_ = Callable(orchestration="", signature=self.CALLABLE.get("orchestration", {}).get("signature"))
        return [name for n, name in enumerate(args.tensor_names) if callable_.is_output(n)]

    def compare_outputs(self, test_args, golden_args, output_names, params) -> None:
        for name in output_names:
            actual, expected = _as_torch(getattr(test_args, name)), _as_torch(getattr(golden_args, name))
            if actual.shape != expected.shape or actual.dtype != expected.dtype:
                raise AssertionError(f"output '{name}': {actual.dtype}{list(actual.shape)} where the golden is "
                                     f"{expected.dtype}{list(expected.shape)}")
            a, e = actual.double(), expected.double()
            if not bool((a.isnan() == e.isnan()).all()) or not bool(
                    (a.isnan() | (a - e).abs().le(self.ATOL + self.RTOL * e.abs())).all()):
                diff = (a - e).abs().nan_to_num(nan=float("inf"))
                worst = int(diff.reshape(-1).argmax())
                raise AssertionError(
                    f"output '{name}' differs from the golden: largest difference {float(diff.max()):g} at "
                    f"element {worst} (got {float(a.reshape(-1)[worst]):g}, expected {float(e.reshape(-1)[worst]):g}; "
                    f"rtol={self.RTOL}, atol={self.ATOL})")

    # -- the run -------------------------------------------------------

    def _case(self, name: str) -> dict:
        return next(c for c in self.CASES if c["name"] == name)

    def _run_case(self, case_name: str, request) -> CaseOutcome:
        case = self._case(case_name)
        cls_name = type(self).__name__
        what = f"{cls_name}::{case_name}"
        platform = next((p for p in PLATFORMS if p in case["platforms"]), None)
        if platform is None:
            pytest.skip(f"{what}: platforms {case['platforms']} include neither a2a3 nor a2a3sim")
        opt = request.config.getoption
        manual_mode = opt("--manual", default="exclude") or "exclude"
        manual = is_manual_for_platform(case.get("manual"), platform)
        if manual_mode == "exclude" and manual:
            pytest.skip(f"{what}: a manual case (run with --manual include)")
        if manual_mode == "only" and not manual:
            pytest.skip(f"{what}: not a manual case (--manual only)")
        selectors = [_parse_selector(s) for s in (opt("--case", default=None) or [])]
        if not _selected(cls_name, case_name, selectors):
            pytest.skip(f"{what}: not selected by --case")
        rounds = int(opt("--rounds", default=1) or 1)
        skip_golden = self.SKIP_GOLDEN or case.get("skip_golden", False) or opt("--skip-golden", default=False)
        sdma = request.node.get_closest_marker("sdma") is not None

        _warn_unmodelled_config(case.get("config", {}), what)
        ring_heap = case.get("config", {}).get("runtime_env", {}).get("ring_heap")
        params = _Params(case.get("params", {}))
        try:
            args = self.generate_args(params)
        except Exception as e:
            pytest.fail(f"{what}: generate_args raised {type(e).__name__}: {e}", pytrace=False)
        if not isinstance(args, TaskArgsBuilder):
            pytest.fail(f"{what}: generate_args must return a TaskArgsBuilder, not {type(args).__name__}", pytrace=False)
        for s in args.specs:
            if isinstance(s, TensorArg):
                try:
                    _tensors.dtype_name(s.value, f"tensor '{s.name}'")
                except TypeError as e:
                    pytest.fail(f"{what}: {e}", pytrace=False)
        golden = args.clone()
        if not skip_golden:
            try:
                self.compute_golden(golden, params)
            except Exception as e:
                pytest.fail(f"{what}: compute_golden raised {type(e).__name__}: {e}", pytrace=False)
        unused = sorted(set(dict.keys(params)) - params.read)
        if unused:
            pytest.fail(f"{what}: params {unused} are not used by generate_args or compute_golden", pytrace=False)

        callable_ = Callable.from_dict(self.CALLABLE, self._st_dir)
        missing = callable_.missing_sources()
        if missing:
            pytest.fail(f"{what}: CALLABLE names a source that does not exist: {missing[0]}", pytrace=False)
        outputs = self.output_names(args)
        trace_dir = opt("--pfsim-trace", default=None)
        runs = {}
        with _runtime_env(self.RUNTIME_ENV, self._st_dir):
            for prefetch in (False, True):
                try:
                    with Worker(enable_sdma=sdma, set=dict(self.PFSIM_SET)) as worker:
                        handle = worker.register(callable_)
                        for r in range(rounds):
                            run_args = args.clone()
                            trace = None
                            if trace_dir:
                                os.makedirs(trace_dir, exist_ok=True)
                                trace = os.path.join(trace_dir, f"{cls_name}.{case_name}.{'on' if prefetch else 'off'}"
                                                     f"{'' if rounds == 1 else f'.{r}'}.json")
                            result = worker.run(handle, run_args, prefetch=prefetch, trace=trace,
                                                ring_heap=ring_heap)
                            label = f"prefetch {'on' if prefetch else 'off'}" + ("" if rounds == 1 else f", round {r}")
                            if not skip_golden:
                                try:
                                    self.compare_outputs(run_args, golden, outputs, params)
                                except AssertionError as e:
                                    pytest.fail(f"{what} ({label}): {e}", pytrace=False)
                            runs.setdefault(prefetch, (result, run_args))
                except CompileError as e:
                    pytest.fail(f"{what}: a source does not compile:\n{e}", pytrace=False)
                except RunError as e:
                    pytest.fail(f"{what} (prefetch {'on' if prefetch else 'off'}): {e}", pytrace=False)
                except (ValueError, TypeError, RuntimeError, OverflowError) as e:
                    pytest.fail(f"{what}: {e}", pytrace=False)
        (off, off_args), (on, on_args) = runs[False], runs[True]
        for name in outputs:
            if _tensors.tensor_bytes(getattr(off_args, name)) != _tensors.tensor_bytes(getattr(on_args, name)):
                pytest.fail(f"{what}: output '{name}' is not bit-identical with prefetch off and on "
                            "(the prefetch changed a value, or the result depends on timing)", pytrace=False)
        outcome = CaseOutcome(off.time_ns, on.time_ns, off.l2_hit_rate, on.l2_hit_rate)
        for key, value in (("pfsim_time_off_ns", outcome.time_off_ns), ("pfsim_time_on_ns", outcome.time_on_ns),
                           ("pfsim_gain_pct", round(outcome.gain_pct, 3)),
                           ("pfsim_l2_hit_rate_off", round(outcome.l2_hit_rate_off, 4)),
                           ("pfsim_l2_hit_rate_on", round(outcome.l2_hit_rate_on, 4))):
            request.node.user_properties.append((key, value))
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

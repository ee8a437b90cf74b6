"""pfsim from Python: a simulated a2a3 die (GM, L2, SDMA engine, 72 cores) as a
Worker that runs users' orchestrations and incore kernels from source.

    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(pfsim.Callable.from_dict(CALLABLE, base_dir="."))
        result = worker.run(handle, [src, out])
        print(result.time_ns, result.l2_hit_rate)

Each Worker is one device process (`pfsim device`) that persists as a device
does: L2 contents, warmed SDMA channels and simulated time carry over from one
run to the next. docs/python.md is the reference.
"""

from __future__ import annotations

import functools
import os
import shutil
import tempfile
import threading
import types
import warnings
from dataclasses import dataclass, field
from enum import IntEnum

from . import _tensors
from ._device import Device, DeviceDied, find_binary

__all__ = ["Worker", "Callable", "Handle", "RunResult", "TaskTiming", "ArgDirection", "CompileError", "RunError",
           "PfsimWarning", "DeviceDied", "find_binary"]


class ArgDirection(IntEnum):
    """How an argument is used (simpler's task_interface): which tensors are outputs."""
    SCALAR = 0
    IN = 1
    OUT = 2
    INOUT = 3


class CompileError(RuntimeError):
    """A source that does not build; the message is the compiler's output (file and line)."""


class PfsimWarning(UserWarning):
    """A run's warning from the simulator (a setting or API it does not model as asked, a risk
    it saw): each of a run's `RunResult.warnings` is also issued as one of these, so that a
    scene test shows it (pytest's warnings summary; stderr outside pytest, once per message)."""


def _issue_warnings(result: "RunResult") -> None:
    for message in result.warnings:
        warnings.warn(message, PfsimWarning, stacklevel=4)  # the caller of the (serialized) run


class RunError(RuntimeError):
    """The run failed on the device (a kernel fault, a stuck task graph, a protocol
    violation, a runtime error code); `result` holds what the run measured."""

    def __init__(self, message: str, result: "RunResult"):
        super().__init__(message)
        self.result = result


@dataclass
class Callable:
    """An orchestration and its incores, from source (simpler's ChipCallable)."""
    orchestration: str
    function: str = "aicpu_orchestration_entry"
    config: str | None = None
    incores: list = field(default_factory=list)  # dicts: func_id, source, core_type ("aiv" | "aic")
    signature: list | None = None                # the orchestration's ArgDirections, if given
    include_dirs: list = field(default_factory=list)
    name: str | None = None

    @classmethod
    def from_dict(cls, spec: dict, base_dir: str = ".") -> "Callable":
        """From a scene test's CALLABLE; relative sources are relative to `base_dir`."""
        def path(p):
            return p if os.path.isabs(p) else os.path.normpath(os.path.join(base_dir, p))
        orch = spec["orchestration"]
        incores = []
        include_dirs = []
        for k in spec.get("incores", []):
            incores.append({"func_id": int(k["func_id"]), "source": path(k["source"]), "core_type": k["core_type"]})
            include_dirs += [path(d) for d in k.get("extra_include_dirs", [])]
        return cls(orchestration=path(orch["source"]), function=orch.get("function_name", cls.function),
                   config=orch.get("config_name"), incores=incores, signature=orch.get("signature"),
                   include_dirs=include_dirs, name=orch.get("name"))

    def is_output(self, n: int) -> bool:
        """Whether tensor argument n is OUT or INOUT in the signature (every tensor is, without one)."""
        tensors = [d for d in (self.signature or []) if int(d) != ArgDirection.SCALAR]
        return n >= len(tensors) or int(tensors[n]) in (ArgDirection.OUT, ArgDirection.INOUT)

    def missing_sources(self) -> list[str]:
        return [p for p in [self.orchestration] + [k["source"] for k in self.incores] if not os.path.isfile(p)]


@dataclass
class Handle:
    """A callable registered on a worker."""
    id: int
    callable: Callable


@dataclass
class TaskTiming:
    name: str
    kernels: list
    cores: list
    blocks: int
    deps: list
    start_ns: float
    end_ns: float
    # run(spans=True): simpler's task id (ring << 32 | place) and each block on each core, dicts of
    # core, core_id, block, dispatch_ns, start_ns, end_ns, finish_ns (simulated time since the die started)
    task_id: int | None = None
    spans: list = field(default_factory=list)
    # run(spans=True) too: the orchestrator's submission of it, [began, reached the scheduler] (ns, as the
    # spans), and for a sync-start cohort that went through the global drain (it fitted no one scheduler
    # thread's free cores), when it entered it; for a consumer staged early on idle cores or busy cores'
    # pending slots (its producers set_allow_early_resolve), when: its spans with that dispatch_ns are the
    # staged blocks
    submit_ns: list | None = None
    drain_ns: float | None = None
    early_ns: float | None = None


@dataclass
class RunResult:
    """What one run measured: graph time (first dispatch to last completion), the
    tasks' times and cores, the die's counters over the run, warnings."""
    prefetch: bool
    time_ns: float
    cycles: int
    tasks: list
    counters: dict
    warnings: list
    log: list
    trace: str | None
    error: str | None
    violations: list
    sim_time_ns: float
    summary: dict
    sanitizer: dict | None = None  # run(sanitize=True): errors, warnings, infos, findings (docs/sanitizer.md)
    advisor: dict | None = None    # run(advise=True): sites, demand_misses, advice (docs/advisor.md)
    faults: list = field(default_factory=list)  # run(inject=[...]): what each SDMA fault did
    task_count: int = 0  # the tasks the graph ran: len(tasks), or with run(tasks=False) their count alone

    def findings(self, kind: str | None = None) -> list:
        """The sanitizer's findings (of one kind, e.g. "stale-completion")."""
        found = (self.sanitizer or {}).get("findings", [])
        return [f for f in found if kind is None or f["kind"] == kind]

    @property
    def l2_hit_rate(self) -> float:
        return self.counters.get("l2", {}).get("hit_rate", 0.0)

    @classmethod
    def from_summary(cls, s: dict, trace: str | None) -> "RunResult":
        tasks = [TaskTiming(t["name"], t["kernels"], t["cores"], t["blocks"], t["deps"], t["start_ns"], t["end_ns"],
                            t.get("task_id"), t.get("spans", []), t.get("submit_ns"), t.get("drain_ns"),
                            t.get("early_ns"))
                 for t in s.get("tasks", [])]
        counters = {k: s[k] for k in ("l2", "gm", "sdma") if k in s}
        return cls(prefetch=s.get("prefetch") == "on", time_ns=s.get("kernel_time_ns", 0.0), cycles=s.get("cycles", 0),
                   tasks=tasks, counters=counters, warnings=s.get("warnings", []), log=s.get("log", []), trace=trace,
                   error=s.get("error"), violations=s.get("violations", []),
                   sim_time_ns=s.get("sim_time_total_ns", 0.0), summary=s, sanitizer=s.get("sanitizer"), advisor=s.get("advisor"),
                   faults=s.get("faults", []), task_count=s.get("task_count", len(tasks)))


def _serialized(method):
    """A Worker method that holds the worker's lock: one run or register at a time."""
    @functools.wraps(method)
    def locked(self, *args, **kwargs):
        with self._lock:
            return method(self, *args, **kwargs)
    return locked


class Worker:
    """One simulated a2a3 die in its own device process.

    enable_sdma provisions the async-DMA workspace (48 channels, warmed) as
    simpler's ChipWorker does; preset, config (a TOML file) and set
    ({"l2.size": "96MiB"}) choose the hardware parameters (`pfsim config`).
    timeout bounds each request in wall seconds (None: no bound); on expiry
    the device is stopped and TimeoutError raised. progress: a run going on
    says so on stderr about every `progress` wall seconds (0: never).
    """

    def __init__(self, enable_sdma: bool = False, preset: str = "a2a3", config: str | None = None,
                 set: dict | None = None, binary: str | None = None, timeout: float | None = None,
                 progress: float = 10.0):
        args = ["--preset", preset, "--progress", repr(float(progress))]
        if config:
            args += ["--config", os.path.abspath(config)]
        for key, value in (set or {}).items():
            args += ["--set", f"{key}={value}"]
        if enable_sdma:
            args.append("--enable-sdma")
        args += self._device_args()
        self.timeout = timeout
        self._dir = None
        self._device = None
        self._chip = None  # _chip_worker's, made on first use
        self._lock = threading.Lock()  # one request at a time: calls from several threads take turns
        shm = "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) else None
        self._dir = tempfile.mkdtemp(prefix="pfsim-worker-", dir=shm)
        args += ["--workdir", self._dir]  # the device removes it if this process is killed
        try:
            device = Device(args, binary, timeout)
        except BaseException:
            self.close()
            raise
        if not device.hello.get("ok"):
            device.close()
            self.close()
            _raise(device.hello)
        self._device = device
        self.enable_sdma = bool(device.hello.get("sdma"))
        self.warmup = device.hello.get("warmup", "")
        self.config = device.hello.get("config", {})
        # each parameter's plausible range, {KEY: (LOW, HIGH)} (the preset's [ranges]: `pfsim check --uncertainty`)
        self.ranges = {k: tuple(v) for k, v in device.hello.get("ranges", {}).items()}

    def _device_args(self) -> list[str]:
        """More arguments of `pfsim device` (a subclass's: level3.Ranks)."""
        return []

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    @property
    def pid(self) -> int | None:
        """The device process's id (None once closed)."""
        return self._device.process.pid if self._device and self._device.alive else None

    def _check_usable(self) -> None:
        """Raises RuntimeError for a closed or stopped worker, DeviceDied for a
        device that ended by itself or was killed from outside."""
        if self._device is None or self._device.stopped:
            raise RuntimeError("the worker is closed (by close(), or stopped after a timeout)")
        if not self._device.alive:
            raise DeviceDied(f"the pfsim device process died ({self._device._exit_text()}); make a new Worker")

    def close(self) -> None:
        """Stops the device process; the worker cannot run afterwards."""
        if self._device is not None:
            self._device.close()
        if self._dir:
            shutil.rmtree(self._dir, ignore_errors=True)
            self._dir = None

    @_serialized
    def register(self, callable) -> Handle:
        """Compiles a callable's orchestration and incores (through the compile
        cache) and loads them on the die. Raises CompileError with the compiler's
        output, FileNotFoundError for a missing source."""
        return self._load("register", callable)

    @_serialized
    def prepare(self, callable) -> Handle:
        """As register, but the die loads the orchestration object anew for this
        handle (fresh statics, shared with no other handle), as the board's AICPU
        loads it for each of simpler's prepared callables: `orchestration_loads`
        counts it once it loaded and its entry points resolved. Runs on the handle
        reuse that load."""
        return self._load("prepare", callable)

    @_serialized
    def release(self, handle: Handle) -> None:
        """The handle no longer runs (a run on it is a ValueError); what it loaded
        stays mapped, so orchestration_loads does not go down."""
        self._request({"op": "release", "handle": handle.id})
        if self._chip is not None:
            self._chip._forget(handle)

    def unregister(self, handle: Handle) -> None:
        """simpler's Worker.unregister: release."""
        self.release(handle)

    def _resolve_handle(self, handle: Handle):
        """simpler's private view of a registered handle: `.slot_id`, the _chip_worker's
        callable slot that runs it."""
        return types.SimpleNamespace(slot_id=self._chip_worker._adopt(handle), handle=handle)

    @_serialized
    def _runtime_slots(self) -> dict:
        """The die's runtime slots and heap bank, the device's `slots` reply (docs/python.md)."""
        return self._request({"op": "slots"})

    @property
    def orchestration_loads(self) -> int:
        """How many orchestration objects the die loaded for prepare(): counted by
        the device, never decreasing."""
        with self._lock:
            return int(self._request({"op": "loads"})["orchestration_loads"])

    @property
    def aicpu_dlopen_count(self) -> int:
        """simpler's name for orchestration_loads."""
        return self.orchestration_loads

    @property
    def _chip_worker(self):
        """simpler's private chip worker: prepared-callable slots on this die
        (pfsim.simpler_worker.ChipWorker)."""
        if self._chip is None:
            from .simpler_worker import ChipWorker  # it imports this module

            self._chip = ChipWorker(self)
        return self._chip

    def _load(self, op: str, callable) -> Handle:
        if isinstance(callable, dict):
            callable = Callable.from_dict(callable)
        missing = callable.missing_sources()
        if missing:
            raise FileNotFoundError(f"callable source not found: {missing[0]}")
        orch = {"source": callable.orchestration, "function": callable.function}
        orch["config"] = callable.config or "aicpu_orchestration_config"
        reply = self._request({"op": op, "orchestration": orch, "incores": callable.incores,
                               "include_dirs": callable.include_dirs})
        return Handle(reply["handle"], callable)

    @_serialized
    def run(self, handle: Handle, args, prefetch: bool = True, trace: str | None = None,
            timeout: float | None = None, sanitize: bool = False, advise: bool = False,
            inject: list | None = None, ring_heap: int | list | None = None,
            ring_task_window: int | list | None = None, ring_dep_pool: int | list | None = None,
            dump_args: int = 0, dump_dir: str | None = None, spans: bool = False,
            scope_stats_dir: str | None = None, deps_json: str | None = None,
            aicpu_thread_num: int = 0, config=None, runtime_slot: int = 0,
            lease_generation: int | None = None, output_hash: str = "sha256", tasks: bool = True) -> RunResult:
        """Runs a registered callable. `args`: a TaskArgsBuilder or a sequence of
        torch tensors / numpy arrays (first) and scalars (then). Output tensors
        (OUT/INOUT in the orchestration's signature; every tensor without one)
        are written back in place. trace: write a Chrome trace (Perfetto) there.
        sanitize: run the prefetch protocol sanitizer; its report is the result's
        `sanitizer` (findings do not raise: assert on them). advise: run the
        prefetch advisor; its report is the result's `advisor`. inject: faults for
        this run only, as `pfsim run --inject` names them ("sdma-error:3",
        "sdma-stall", "doorbell-lost", ...): what each did is the result's `faults`.
        ring_heap, ring_task_window, ring_dep_pool: simpler's runtime_env, the
        sizes of each scope depth's heap ring (bytes), task window (slots) and
        dependency pool (entries): an int for every ring or a list of 4, 0 for the
        default (docs/cases.md#ring-sizes). dump_args: simpler's --dump-args level (1 partial:
        the arguments CoreTaskArgs::dump marks; 2 full; 3 hybrid: every argument, tensor bytes
        only for marked ones), written as simpler's args_dump folder (args_dump.json, args.bin)
        into dump_dir (docs/python.md#diagnostics). spans: each task's TaskTiming carries its
        blocks' spans per core (what simpler's swimlane records hold). scope_stats_dir: write
        simpler's scope_stats.jsonl there (each scope's ring state as it begins and ends).
        deps_json: write simpler's deps.json (--enable-dep-gen) there: the graph's tasks,
        tensors and dependency edges, each edge with its source (explicit, creator, tensormap).
        aicpu_thread_num: simpler's CallConfig field, 1 to 4 (0: simpler's default, 4): one
        orchestrator thread and the others schedulers, each owning every n-th cluster, so a
        sync-start cohort wider than one scheduler's free cores goes through the global drain
        (docs/compatibility.md#drain). config: simpler's CallConfig, in place of those of the
        options above it sets (a field pfsim does not honour: ValueError naming it).
        runtime_slot: the die's runtime slot the arguments pass through (0 or 1); with
        lease_generation, simpler's pipeline lease of it (docs/python.md#pipeline-slots).
        output_hash: what the summary's `outputs` say of each
        output's bytes: "sha256" (its SHA-256), or "digest" (a fast non-cryptographic
        256-bit digest as `digest`, `sha256` empty: enough for judge, several times
        cheaper on large outputs). tasks=False: the result's `tasks` stays empty and
        `task_count` alone says how many ran (the device keeps no record per task: for a
        caller that reads none, a large graph's memory and time; not with spans)."""
        self._check_usable()
        if output_hash not in ("sha256", "digest"):
            raise ValueError(f"output_hash = {output_hash!r}: \"sha256\" or \"digest\"")
        if spans and not tasks:
            raise ValueError("spans=True with tasks=False: a run's spans are in its tasks")
        hash_kind = True if output_hash == "sha256" else "digest"  # an output's "hash" in the request
        if config is not None:
            options = config.run_options("Worker.run")
            aicpu_thread_num = options.pop("aicpu_thread_num") or aicpu_thread_num
            ring_heap = options.get("ring_heap", ring_heap)
            ring_task_window = options.get("ring_task_window", ring_task_window)
            ring_dep_pool = options.get("ring_dep_pool", ring_dep_pool)
        specs = list(getattr(args, "specs", args))
        named = [isinstance(a, tuple) and hasattr(a, "name") and hasattr(a, "value") for a in specs]  # TensorArg, Scalar
        values = [a.value if n else a for a, n in zip(specs, named)]
        names = [a.name if n else f"arg{i}" for i, (a, n) in enumerate(zip(specs, named))]
        tensors, scalars = [], []
        for i, v in enumerate(values):
            if _tensors.is_tensor(v):
                if scalars:
                    raise ValueError(f"argument {names[i]}: tensors must come before scalars")
                tensors.append(i)
            else:
                scalars.append(_tensors.scalar_bits(v, f"argument {names[i]}"))
        # The tensors go to the device in one file (in /dev/shm where there is one), each at a
        # page boundary: the device maps those pages as the tensors' GM, so the values are
        # copied once in (here) and once out (the outputs, below), never through the pipe.
        # An input already in a memory file (a scene test's arguments, _tensors.copy_on_write)
        # is not copied: the device maps that file privately (its writes stay in the die).
        path = os.path.join(self._dir, "args.bin")
        layout, offset = [], 0
        with open(path, "wb") as f:
            for n, i in enumerate(tensors):
                data = _tensors.tensor_buffer(values[i])
                # Only outputs are hashed (judge compares them): an input's SHA-256 was 8 % of a large run (#49).
                layout.append({"name": names[i], "dtype": _tensors.dtype_name(values[i], f"argument {names[i]}"),
                               "shape": _tensors.shape_of(values[i]), "offset": offset, "bytes": data.nbytes,
                               "hash": hash_kind if handle.callable.is_output(n) else False})
                own = _tensors.memory_file(values[i])
                if own:  # an output's file is written in place (mapped shared), an input's never
                    layout[-1].update(file=own, offset=0, shared=handle.callable.is_output(n))
                    continue
                f.seek(offset)
                f.write(data)
                offset += -(-data.nbytes // _tensors.PAGE) * _tensors.PAGE
            f.truncate(offset)
        request = {"op": "run", "handle": handle.id, "tensors": layout, "scalars": scalars, "data": path,
                   "prefetch": bool(prefetch), "sanitize": bool(sanitize), "advise": bool(advise),
                   "inject": [str(f) for f in (inject or [])]}
        if trace:
            request["trace"] = os.path.abspath(trace)
        if aicpu_thread_num:
            if not isinstance(aicpu_thread_num, int) or not 0 <= aicpu_thread_num <= 4:
                raise ValueError(f"aicpu_thread_num = {aicpu_thread_num!r}: simpler's a2a3 runs 1 to 4 AICPU "
                                 "threads (0: its default, 4)")
            request["aicpu_thread_num"] = aicpu_thread_num
        if spans:
            request["spans"] = True
        if not tasks:
            request["tasks"] = False
        if runtime_slot:
            request["runtime_slot"] = int(runtime_slot)
        if lease_generation is not None:
            request["generation"] = int(lease_generation)
        if scope_stats_dir:
            request["scope_stats_dir"] = os.path.abspath(scope_stats_dir)
        if deps_json:
            request["deps_json"] = os.path.abspath(deps_json)
        if dump_args:
            if not dump_dir:
                raise ValueError("dump_args needs a dump_dir")
            request["dump_args"] = int(dump_args)
            request["dump_dir"] = os.path.abspath(dump_dir)
        from .task_interface import ring_values  # it imports this module
        for field, value in (("ring_heap", ring_heap), ("ring_task_window", ring_task_window),
                             ("ring_dep_pool", ring_dep_pool)):
            if value is not None:
                request[field] = ring_values(field, value)
        try:
            reply = self._request(request, timeout)
            with open(path, "rb") as f:
                for n, i in enumerate(tensors):
                    if handle.callable.is_output(n) and "file" not in layout[n]:
                        f.seek(layout[n]["offset"])
                        _tensors.read_into(values[i], f)
        finally:
            if os.path.exists(path):
                os.truncate(path, 0)  # the file's pages are memory (/dev/shm): given back after each run
        result = RunResult.from_summary(reply["result"], request.get("trace"))
        _issue_warnings(result)
        problems = ([result.error] if result.error else []) + [f"protocol violation: {v}" for v in result.violations]
        if problems:
            raise RunError("; ".join(problems), result)
        return result

    def judge(self, off: RunResult, on: RunResult, expected_gain_pct: tuple | None = None) -> dict:
        """The verdict on two runs of the same work, prefetch off and on, as `pfsim check`
        gives it (docs/python.md): "equivalent" (both ran cleanly and every tensor ended
        bit-identical), "failure" (why not, naming the tensor), "time_off_ns",
        "time_on_ns", "gain_pct", and "gain_met" (within expected_gain_pct, a (min, max)
        in %, when given)."""
        return self._judge(off.summary, on.summary, expected_gain_pct)

    def _judge(self, off: dict, on: dict, expected_gain_pct: tuple | None) -> dict:
        """The device's verdict on two sides of a "judge" request (docs/python.md)."""
        request = {"op": "judge", "off": off, "on": on}
        if expected_gain_pct is not None:
            request["expected_gain_pct"] = [float(expected_gain_pct[0]), float(expected_gain_pct[1])]
        return self._request(request)["verdict"]

    def _request(self, message: dict, timeout: float | None = None) -> dict:
        self._check_usable()
        reply = self._device.request(message, timeout if timeout is not None else self.timeout)
        if not reply.get("ok"):
            _raise(reply)
        return reply


def _raise(reply: dict):
    kind, message = reply.get("kind"), reply.get("message", "unknown error")
    if kind == "compile":
        raise CompileError(message)
    if kind in ("bad_input", "config", "protocol"):
        raise ValueError(message)
    raise RuntimeError(message)

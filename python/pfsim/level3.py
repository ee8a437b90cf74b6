"""Level 3 on pfsim: several dies of one simulation driven from Python, with
the shape of simpler's host-side L3 worker (its Worker at level 3, the
orchestrator its orchestration functions take, create_buffer, comm domains).

    with pfsim.level3.L3Worker(device_count=2, enable_sdma=True) as w:
        chip = w.register(pfsim.Callable.from_dict(CHIP_CALLABLE, base_dir="."))
        a = w.create_buffer(4096)
        def orch_fn(orch, args, config):
            with orch.allocate_domain(name="d", workers=[0, 1], window_size=4096) as d:
                for rank in (0, 1):
                    ta = TaskArgs()
                    ta.add_tensor(a.tensor((1024,), DataType.FLOAT32), TensorArgType.INPUT)
                    ta.add_scalar(d[rank].device_ctx)
                    orch.submit_next_level(chip, ta, config, worker=rank)
        w.run(orch_fn)

Rank r runs on die r of ONE device process (`pfsim device --ranks N`): its
orchestration and kernels run on that die, and what they send another rank
(a store or a TPUT into a peer's window, an SDMA TGET_ASYNC from it) crosses
the modelled die link and SDMA engine. What the host does is the host's:
create_buffer is a file in /dev/shm whose pages the device maps as the
tensor's GM for a call (no copy either way), copy_to / copy_from write and
read a die's GM, and sub tasks (Python callables) run in this process.

The orchestration function only records: submit_* build a graph whose
dependencies come from the tensors' tags (an INPUT depends on the last task
that wrote an overlapping range of the same buffer; an OUTPUT, OUTPUT_EXISTING
or INOUT on the last writer and the readers since; NO_DEP on nothing). When it
returns, the graph runs in waves: every ready sub task, then every ready chip
task that finds its die free (one task per die at a time, in submission
order), the chip tasks of a wave on their dies together in one simulation
run. A released domain's windows are freed after the graph has run.

What simpler's L3 worker has and pfsim does not model is refused by name
(`Orchestrator.REFUSED`, `L3Worker.REFUSED`): a NotImplementedError saying so.
docs/python.md ("Level 3") is the reference.
"""

from __future__ import annotations

import ctypes
import hashlib
import mmap
import os
import struct
import threading
from dataclasses import dataclass, field

from . import Handle, RunError, RunResult, Worker, _issue_warnings, _serialized, _tensors
from .task_interface import ring_values

__all__ = ["L3Worker", "Orchestrator", "HostBuffer", "DeviceBuffer", "TensorRef", "CommDomain", "DomainContext",
           "SubHandle", "WaveResult", "Ranks"]

_PAGE = _tensors.PAGE
COMM_CONTEXT_BYTES = 1056  # include/platform_comm/comm_context.h: the ABI's size
COMM_MAX_RANK_NUM = 64

# simpler's DataType values (pfsim.task_interface.DataType) -> pfsim's dtype names and sizes
_DTYPES = {0: ("float32", 4), 1: ("float16", 2), 2: ("int32", 4), 3: ("int16", 2), 4: ("int8", 1), 5: ("uint8", 1),
           6: ("bfloat16", 2), 7: ("int64", 8), 8: ("uint64", 8), 9: ("uint16", 2), 10: ("uint32", 4), 11: ("bool", 1)}
# TensorArgType values (pfsim.task_interface.TensorArgType)
_INPUT, _OUTPUT, _INOUT, _OUTPUT_EXISTING, _NO_DEP = 0, 1, 2, 3, 4


def _dtype_of(dtype) -> tuple[str, int]:
    """(pfsim's name, element size) of a DataType (or its int value); TypeError otherwise."""
    try:
        return _DTYPES[int(dtype)]
    except (KeyError, TypeError, ValueError):
        raise TypeError(f"dtype {dtype!r} is not one of simpler's DataType values (0..11)") from None


class Ranks(Worker):
    """N simulated dies of one simulation in one device process (`pfsim device
    --ranks N`): GM on each rank, and calls of several ranks run together.
    The requests are docs/python.md's "Several dies"."""

    def __init__(self, count: int, enable_sdma: bool = False, **kwargs):
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= COMM_MAX_RANK_NUM:
            raise ValueError(f"device_count={count!r}: pfsim simulates 1 to {COMM_MAX_RANK_NUM} dies in one simulation")
        self._count = count
        super().__init__(enable_sdma=enable_sdma, **kwargs)
        self.count = int(self._device.hello.get("ranks", count))

    def _device_args(self) -> list[str]:
        return ["--ranks", str(self._count)]

    def run(self, *args, **kwargs):
        raise TypeError("a Ranks device runs calls of several ranks: use run_ranks")

    @_serialized
    def alloc(self, rank: int, nbytes: int, window: bool = False) -> tuple[int, int]:
        """(GM address, pointer kernels use) of `nbytes` on rank `rank`'s die. A `window`
        is a communication window of exactly `nbytes`: other ranks' comm instructions on
        that die must lie in one of its windows."""
        request = {"op": "alloc", "rank": int(rank), "bytes": int(nbytes)}
        if window:
            request["window"] = True
        reply = self._request(request)
        return reply["gm"], reply["pointer"]

    @_serialized
    def free(self, rank: int, gm: int) -> None:
        """Gives back `gm` and everything allocated on the rank after it (GM is a stack)."""
        self._request({"op": "free", "rank": int(rank), "gm": int(gm)})

    @_serialized
    def write(self, rank: int, gm: int, data: bytes) -> None:
        path = os.path.join(self._dir, "args.bin")  # the name the device removes if this process dies
        with open(path, "wb") as f:
            f.write(data)
        try:
            self._request({"op": "write", "rank": int(rank), "gm": int(gm), "bytes": len(data), "file": path,
                           "offset": 0})
        finally:
            os.unlink(path)

    @_serialized
    def read(self, rank: int, gm: int, nbytes: int) -> bytes:
        path = os.path.join(self._dir, "args.bin")
        open(path, "wb").close()
        try:
            self._request({"op": "read", "rank": int(rank), "gm": int(gm), "bytes": int(nbytes), "file": path,
                           "offset": 0})
            with open(path, "rb") as f:
                return f.read()
        finally:
            os.unlink(path)

    @_serialized
    def run_ranks(self, calls: list[dict], prefetch: bool = True, timeout: float | None = None,
                  advise: bool = False) -> list[RunResult]:
        """calls: [{"rank", "handle", "tensors": [{"dtype", "shape", "bytes", "file", "offset"} or {..., "gm"}],
        "scalars", ["trace": a Chrome trace of that rank's die]}], at most one per rank; their graphs
        run together. A RunResult per call; RunError naming the rank for the first that failed.
        advise: each result's `advisor` holds the run's communication advice (docs/advisor.md,
        "Several dies": the prefetches that delayed copies between dies; not measured)."""
        request = {"op": "run_ranks", "calls": calls, "prefetch": bool(prefetch)}
        if advise:
            request["advise"] = True
        reply = self._request(request, timeout)
        results = [RunResult.from_summary(s, c.get("trace")) for s, c in zip(reply["results"], calls)]
        for call, result in zip(calls, results):
            _issue_warnings(result)
            problems = ([result.error] if result.error else []) + [f"protocol violation: {v}" for v in result.violations]
            if problems:
                raise RunError(f"rank {call['rank']}: " + "; ".join(problems), result)
        return results


# -- buffers and tensors ----------------------------------------------------


class _Shm:
    """A host buffer's mapping, as simpler's handle.shm shows it: `buf` (a memoryview), `name`."""

    def __init__(self, name: str, buf: memoryview):
        self.name, self.buf = name, buf


class HostBuffer:
    """Host memory a chip task's tensor may name (Worker.create_buffer): a file
    in the worker's folder, mapped here (`shm.buf`, writable in place) and, for
    a call, mapped by the device as the tensor's GM: what a kernel writes is in
    `shm.buf` when the run returns. `base` is its address in this process (a
    torch.frombuffer view's data_ptr). The file is unlinked at once and named
    to the device through this process's descriptor (`path`,
    /proc/PID/fd/N): its memory goes with this process however it ends."""

    def __init__(self, path: str, nbytes: int, buffer_id: int):
        if isinstance(nbytes, bool) or not isinstance(nbytes, int) or nbytes <= 0:
            raise ValueError(f"create_buffer({nbytes!r}): a positive number of bytes")
        self.nbytes, self.buffer_id = nbytes, buffer_id
        span = -(-nbytes // _PAGE) * _PAGE  # the device maps whole pages
        self._fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
        try:
            os.unlink(path)
            os.ftruncate(self._fd, span)
            self._map = mmap.mmap(self._fd, span, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
        except BaseException:
            os.close(self._fd)
            raise
        self.path = f"/proc/{os.getpid()}/fd/{self._fd}"
        anchor = ctypes.c_char.from_buffer(self._map)
        self.base = ctypes.addressof(anchor)
        del anchor  # an export of the map: it would keep the map from closing
        self.shm = _Shm(os.path.basename(path), memoryview(self._map)[:nbytes])
        self.closed = False
        self.name = ""  # what a run's results call its tensors (the level-3 harness: the case's tensor); "" argN

    def tensor(self, shapes, dtype, offset: int = 0) -> "TensorRef":
        """The tensor of `shapes` and `dtype` (a DataType or its value) at byte `offset` of this buffer."""
        return TensorRef(self, tuple(int(s) for s in shapes), int(dtype), int(offset))

    def close(self) -> None:
        """Unmaps the buffer and closes its file. Views still held over shm.buf
        keep the mapping (and its memory) alive until they go."""
        if self.closed:
            return
        self.closed = True
        try:
            self.shm.buf.release()
            self._map.close()
        except BufferError:
            pass  # torch views of shm.buf remain: the map goes with the last of them
        os.close(self._fd)

    def __repr__(self):
        return f"HostBuffer(id={self.buffer_id}, nbytes={self.nbytes})"


@dataclass(eq=False)
class DeviceBuffer:
    """GM on one rank's die (a comm window's buffer): `gm` its address there,
    `pointer` the address kernels of any rank use for it."""
    rank: int
    gm: int
    pointer: int
    nbytes: int
    name: str = ""

    def tensor(self, shapes, dtype, offset: int = 0) -> "TensorRef":
        return TensorRef(self, tuple(int(s) for s in shapes), int(dtype), int(offset))


@dataclass(frozen=True)
class TensorRef:
    """A tensor a task argument names: `shapes` and `dtype` at byte `offset` of a buffer."""
    buffer: object
    shapes: tuple
    dtype: int
    offset: int = 0

    @property
    def nbytes(self) -> int:
        n = _dtype_of(self.dtype)[1]
        for s in self.shapes:
            n *= s
        return n

    def span(self) -> tuple[int, int]:
        return self.offset, self.offset + self.nbytes


# -- comm domains ----------------------------------------------------------


@dataclass
class DomainContext:
    """One worker's view of a domain (simpler's ChipDomainContext): its rank in
    the domain, `device_ctx` (the pointer to its CommContext in its die's GM, a
    scalar for its tasks), its window and the window's named buffers."""
    name: str
    domain_rank: int
    domain_size: int
    device_ctx: int
    local_window_base: int
    actual_window_size: int
    buffers: dict


class CommDomain:
    """A communication domain over some workers (Orchestrator.allocate_domain):
    a window of `window_size` bytes in each worker's die GM and a CommContext
    per worker whose windowsIn[k] is domain rank k's window. `d[worker]` is that
    worker's DomainContext. Used as a context manager, its exit releases it:
    no more indexing; its GM is freed after the run's graph has run."""

    def __init__(self, name: str, workers: tuple, contexts: dict, allocations: list):
        self.name, self.workers, self.contexts = name, workers, contexts
        self._allocations = allocations  # (rank, gm) to free, first allocation of each rank first
        self.released = False
        self.freed = False

    def __getitem__(self, worker: int) -> DomainContext:
        if self.released:
            raise RuntimeError(f"comm domain {self.name!r} is released: index it before its release")
        try:
            return self.contexts[worker]
        except KeyError:
            raise KeyError(f"comm domain {self.name!r} has no worker {worker!r} (its workers: "
                           f"{list(self.workers)})") from None

    def release(self) -> None:
        self.released = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


# -- the graph an orchestration function records ------------------------------


@dataclass
class SubHandle:
    """A Python callable a sub task runs (simpler's sub callables), in this process."""
    id: int
    fn: object
    name: str = ""


@dataclass
class _Node:
    index: int
    kind: str                 # "chip" or "sub"
    handle: object
    members: list             # chip: [(worker, TaskArgs)]; sub: [TaskArgs or None]
    deps: set = field(default_factory=set)
    config: object = None     # a chip task's CallConfig (its runtime_env's ring sizes)


@dataclass
class WaveResult:
    """A wave's chip tasks run together: (worker, RunResult) for each."""
    results: list


def _buffer_key(buffer) -> tuple:
    return ("host", buffer.buffer_id) if isinstance(buffer, HostBuffer) else ("device", buffer.rank, buffer.gm)


class Orchestrator:
    """What an L3 orchestration function gets as `orch`: it records tasks
    (submit_next_level, submit_next_level_group, submit_sub, submit_sub_group),
    allocates comm domains and copies between host and a die's GM."""

    # simpler's orchestrator methods pfsim does not model -> why
    REFUSED = {
        "allocate_global_domain": "a network of nodes (level 4) is not modelled",
        "release_global_domain": "a network of nodes (level 4) is not modelled",
        "get_global_domain": "a network of nodes (level 4) is not modelled",
        "copy_to_global_domain": "a network of nodes (level 4) is not modelled",
        "copy_from_global_domain": "a network of nodes (level 4) is not modelled",
        "create_worker_chip_region": "L3-L2 message regions are not modelled",
        "create_worker_chip_queue": "L3-L2 message queues are not modelled",
        "alloc_child_tensor": "device allocations outside a comm domain are not modelled yet",
        "alloc": "runtime-managed intermediate buffers are not modelled yet (use Worker.create_buffer)",
        "free": "device allocations outside a comm domain are not modelled yet",
        "scope_begin": "L3 scopes are not modelled yet",
        "scope_end": "L3 scopes are not modelled yet",
        "scope": "L3 scopes are not modelled yet",
        "committed_device_memory": "not modelled",
    }

    def __init__(self, worker: "L3Worker"):
        self._worker = worker
        self._nodes: list[_Node] = []
        self._writers: dict = {}   # buffer key -> [(start, end, node index)] of the last writers
        self._readers: dict = {}   # buffer key -> [(start, end, node index)] of readers since
        self.domains: list[CommDomain] = []

    def __getattr__(self, name: str):
        if name in Orchestrator.REFUSED:
            raise NotImplementedError(f"orch.{name}: {Orchestrator.REFUSED[name]} on pfsim")
        raise AttributeError(f"'Orchestrator' object has no attribute '{name}'")

    # -- tasks --

    def submit_next_level(self, callable_handle, args, config=None, *, worker: int) -> None:
        """A chip task: `callable_handle` (a registered chip callable) on worker `worker`'s die."""
        self._chip(callable_handle, [(worker, args)], config, "submit_next_level")

    def submit_next_level_group(self, callable_handle, args_list, config=None, *, workers) -> None:
        """One task of several chips: the callable on each worker with its own arguments, done when all are."""
        workers = list(workers)
        args_list = list(args_list)
        if len(workers) != len(args_list):
            raise ValueError(f"submit_next_level_group: {len(workers)} workers but {len(args_list)} argument lists")
        if len(set(workers)) != len(workers):
            raise ValueError(f"submit_next_level_group: workers {workers} repeat")
        self._chip(callable_handle, list(zip(workers, args_list)), config, "submit_next_level_group")

    def submit_sub(self, callable_handle, args=None) -> None:
        """A sub task: a registered Python callable run in this process with `args`."""
        self._sub(callable_handle, [args], "submit_sub")

    def submit_sub_group(self, callable_handle, args_list) -> None:
        self._sub(callable_handle, list(args_list), "submit_sub_group")

    def _chip(self, handle, members, config, what):
        if not isinstance(handle, Handle):
            raise TypeError(f"{what}: a registered chip callable, not {type(handle).__name__}")
        for worker, args in members:
            if isinstance(worker, bool) or not isinstance(worker, int) or not 0 <= worker < self._worker.device_count:
                raise ValueError(f"{what}: worker={worker!r} is not one of the {self._worker.device_count} chip "
                                 "workers")
        refused = config.refused() if hasattr(config, "refused") else []
        if refused:
            raise ValueError(f"{what}: config {refused[0]}")
        self._add(_Node(len(self._nodes), "chip", handle, members, config=config), [a for _, a in members])

    def _sub(self, handle, args_list, what):
        if not isinstance(handle, SubHandle):
            raise TypeError(f"{what}: a registered sub callable, not {type(handle).__name__}")
        if not self._worker.num_sub_workers:
            raise ValueError(f"{what}: the worker has no sub-workers (num_sub_workers=0)")
        self._add(_Node(len(self._nodes), "sub", handle, args_list), args_list)

    def _add(self, node: _Node, args_list) -> None:
        refs = []
        for args in args_list:
            for ref, tag in getattr(args, "tensors", []):
                refs.append((ref, int(tag)))
        for ref, tag in refs:  # dependencies first, against the tasks before this one
            if tag == _NO_DEP:
                continue
            key, (lo, hi) = _buffer_key(ref.buffer), ref.span()
            overlapping = lambda spans: {i for s, e, i in spans if s < hi and lo < e}  # noqa: E731
            node.deps |= overlapping(self._writers.get(key, []))
            if tag != _INPUT:
                node.deps |= overlapping(self._readers.get(key, []))
        for ref, tag in refs:
            if tag == _NO_DEP:
                continue
            key, (lo, hi) = _buffer_key(ref.buffer), ref.span()
            if tag == _INPUT:
                self._readers.setdefault(key, []).append((lo, hi, node.index))
            else:
                self._writers[key] = [(s, e, i) for s, e, i in self._writers.get(key, []) if e <= lo or hi <= s]
                self._writers[key].append((lo, hi, node.index))
                self._readers[key] = [(s, e, i) for s, e, i in self._readers.get(key, []) if e <= lo or hi <= s]
        node.deps.discard(node.index)
        self._nodes.append(node)

    # -- domains and copies --

    def allocate_domain(self, *, name: str, workers, window_size: int, buffers=()) -> CommDomain:
        """A comm domain over `workers` (their order is the domain's ranks): a window of
        `window_size` bytes on each worker's die, zeroed, `buffers` (CommBufferSpec) carved
        from it in order, and each worker's CommContext."""
        return self._worker._allocate_domain(self, str(name), tuple(int(w) for w in workers), int(window_size),
                                             list(buffers))

    def release_domain(self, handle: CommDomain) -> None:
        handle.release()

    def copy_to(self, dst, src) -> None:
        """Host to die: `src` (a HostBuffer, a torch tensor or a numpy array) into the DeviceBuffer `dst`,
        after the tasks recorded so far have run."""
        if not isinstance(dst, DeviceBuffer):
            raise TypeError(f"copy_to: the destination must be a die's buffer (a domain's), not {type(dst).__name__}")
        data = bytes(src.shm.buf) if isinstance(src, HostBuffer) else _tensors.tensor_buffer(src).tobytes()
        if len(data) > dst.nbytes:
            raise ValueError(f"copy_to: {len(data)} bytes do not fit in buffer '{dst.name}' ({dst.nbytes} bytes)")
        self._worker._drain(self)
        self._worker._ranks.write(dst.rank, dst.gm, data)

    def copy_from(self, dst, src) -> None:
        """Die to host: the DeviceBuffer `src` into `dst` (a HostBuffer or a CPU tensor), after the tasks
        recorded so far have run."""
        if not isinstance(src, DeviceBuffer):
            raise TypeError(f"copy_from: the source must be a die's buffer (a domain's), not {type(src).__name__}")
        self._worker._drain(self)
        target = dst.shm.buf if isinstance(dst, HostBuffer) else memoryview(_tensors.tensor_buffer(dst))
        n = min(len(target), src.nbytes)
        target[:n] = self._worker._ranks.read(src.rank, src.gm, n)


# -- the worker ------------------------------------------------------------


class L3Worker:
    """simpler's Worker at level 3 on pfsim: `device_count` chip workers, each
    a die of one simulation, and `num_sub_workers` for sub tasks (run in this
    process, one at a time, in dependency order)."""

    REFUSED = {
        "make_tensor_arg": "a fork-inherited host tensor is not modelled: name host memory with create_buffer",
        "alloc_shared_tensor": "fork-inherited host memory is not modelled: use create_buffer",
        "alloc_child_tensor": "device allocations outside a comm domain are not modelled yet",
    }

    def __init__(self, device_count: int = 1, num_sub_workers: int = 0, enable_sdma: bool = False,
                 set: dict | None = None, timeout: float | None = None, progress: float = 10.0):
        if isinstance(num_sub_workers, bool) or not isinstance(num_sub_workers, int) or num_sub_workers < 0:
            raise ValueError(f"num_sub_workers={num_sub_workers!r}: a number of sub-workers, 0 or more")
        self.device_count = device_count
        self.num_sub_workers = num_sub_workers
        self._ranks = Ranks(device_count, enable_sdma=enable_sdma, set=set, timeout=timeout, progress=progress)
        self.enable_sdma = self._ranks.enable_sdma
        self.ranges = self._ranks.ranges  # each parameter's plausible range, {KEY: (LOW, HIGH)}
        self._lock = threading.Lock()
        self._next_buffer = 1
        self._buffers: list[HostBuffer] = []
        self._subs: list[SubHandle] = []
        self.waves: list[WaveResult] = []  # the last run's
        self.prefetch = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __getattr__(self, name: str):
        if name in L3Worker.REFUSED:
            raise NotImplementedError(f"Worker.{name}: {L3Worker.REFUSED[name]} on pfsim")
        raise AttributeError(f"'L3Worker' object has no attribute '{name}'")

    def close(self) -> None:
        for b in self._buffers:
            b.close()
        self._buffers.clear()
        self._ranks.close()

    def register(self, callable_) -> Handle:
        """A chip callable (an orchestration and its incores), compiled and loaded for every die."""
        return self._ranks.register(callable_)

    def register_sub(self, fn, name: str = "") -> SubHandle:
        """A Python callable for sub tasks."""
        if not callable(fn):
            raise TypeError(f"sub callable {name!r}: not callable")
        self._subs.append(SubHandle(len(self._subs), fn, name))
        return self._subs[-1]

    def create_buffer(self, nbytes: int) -> HostBuffer:
        """Host memory chip tasks' tensors may name (HostBuffer); closed with the worker at the latest."""
        buffer = HostBuffer(os.path.join(self._ranks._dir, f"buffer-{self._next_buffer}.bin"), nbytes, self._next_buffer)
        self._next_buffer += 1
        self._buffers.append(buffer)
        return buffer

    def run(self, orch_fn, args=None, config=None, prefetch: bool | None = None,
            trace: str | None = None, advise: bool = False) -> list[WaveResult]:
        """Calls orch_fn(orch, args, config), then runs the graph it recorded; frees
        the domains it released. The chip tasks' results, by wave. trace: a folder
        that gets a Chrome trace (Perfetto) of each chip task's die, wave{W}_rank{R}.json
        (a result's `trace` names its file). advise: each result's `advisor` holds its
        wave's communication advice (the prefetches that delayed copies between dies)."""
        with self._lock:
            if prefetch is not None:
                self.prefetch = bool(prefetch)
            self._advise = bool(advise)
            self._trace_dir = os.path.abspath(trace) if trace else None
            if self._trace_dir:
                os.makedirs(self._trace_dir, exist_ok=True)
            orch = Orchestrator(self)
            self.waves = []
            try:
                orch_fn(orch, args, config)
                self._drain(orch)
            finally:
                self._free_domains(orch)
            return self.waves

    def judge(self, off: list, on: list, expected_gain_pct: tuple | None = None, host: tuple | None = None) -> dict:
        """The verdict on two runs of the same work (run()'s waves), prefetch off and on, by the
        device's judge, `pfsim check`'s (docs/python.md): "equivalent" (every call ran cleanly and
        every tensor of every call ended bit-identical, and so did the host's tensors in `host`,
        (off, on) of host_hashes()), "failure" (why not, naming the tensor: waveW.rankR.NAME, or
        host.NAME), "time_off_ns" and "time_on_ns" (each wave's longest call, summed), "gain_pct",
        and "gain_met" (within expected_gain_pct, a (min, max) in %, when given)."""
        def side(run, hashes):
            waves = [[{"rank": rank, "result": result.summary} for rank, result in w.results] for w in run]
            return {"waves": waves, "host": hashes or []}

        host_off, host_on = host or (None, None)
        with self._lock:
            return self._ranks._judge(side(off, host_off), side(on, host_on), expected_gain_pct)

    @staticmethod
    def host_hashes(buffers: dict) -> list:
        """The bytes of host buffers by name ({NAME: HostBuffer}) as the judge compares them after a
        run: [{"name", "sha256"}]."""
        return [{"name": name, "sha256": hashlib.sha256(b.shm.buf).hexdigest()} for name, b in buffers.items()]

    # -- what the orchestrator asks --

    def _allocate_domain(self, orch: Orchestrator, name, workers, window_size, buffers) -> CommDomain:
        if not workers:
            raise ValueError(f"allocate_domain {name!r}: no workers")
        if len(set(workers)) != len(workers):
            raise ValueError(f"allocate_domain {name!r}: workers {list(workers)} repeat")
        for w in workers:
            if not 0 <= w < self.device_count:
                raise ValueError(f"allocate_domain {name!r}: worker {w} is not one of the {self.device_count} chip "
                                 "workers")
        if any(d.name == name and not d.released for d in orch.domains):
            raise ValueError(f"allocate_domain {name!r}: a live domain has that name")
        if window_size <= 0:
            raise ValueError(f"allocate_domain {name!r}: window_size={window_size}: a positive number of bytes")
        carved, offset = [], 0
        for spec in buffers:
            nbytes = int(spec.nbytes)
            if nbytes < 0:
                raise ValueError(f"allocate_domain {name!r}: buffer {spec.name!r}: nbytes={nbytes}")
            carved.append((spec.name, offset, nbytes))
            offset += nbytes
        if offset > window_size:
            raise ValueError(f"allocate_domain {name!r}: its buffers take {offset} bytes, more than window_size="
                             f"{window_size}")
        allocations, windows, ctxs = [], {}, {}
        for w in workers:
            windows[w] = self._ranks.alloc(w, window_size, window=True)
            ctxs[w] = self._ranks.alloc(w, COMM_CONTEXT_BYTES)
            allocations.append((w, windows[w][0]))
            self._ranks.write(w, windows[w][0], bytes(window_size))
        contexts = {}
        for rank, w in enumerate(workers):
            pointers = [windows[k][1] for k in workers] + [0] * (COMM_MAX_RANK_NUM - len(workers))
            ctx = struct.pack(f"<QQIIQ{COMM_MAX_RANK_NUM}Q{COMM_MAX_RANK_NUM}Q", 0, 0, rank, len(workers), window_size,
                              *pointers, *([0] * COMM_MAX_RANK_NUM))
            self._ranks.write(w, ctxs[w][0], ctx)
            gm, pointer = windows[w]
            contexts[w] = DomainContext(name, rank, len(workers), ctxs[w][1], pointer, window_size, {
                n: DeviceBuffer(w, gm + off, pointer + off, nb, n) for n, off, nb in carved})
        domain = CommDomain(name, workers, contexts, allocations)
        orch.domains.append(domain)
        return domain

    def _free_domains(self, orch: Orchestrator) -> None:
        for domain in reversed(orch.domains):  # GM is a stack on each die
            if domain.freed or self._ranks._device is None or not self._ranks._device.alive:
                continue
            for rank, gm in domain._allocations:
                self._ranks.free(rank, gm)
            domain.freed = True

    def _drain(self, orch: Orchestrator) -> None:
        """Runs the recorded tasks not yet run, in waves (the module's docstring)."""
        nodes, done = orch._nodes, getattr(orch, "_done", set())
        orch._done = done
        while len(done) < len(nodes):
            ready = [n for n in nodes if n.index not in done and n.deps <= done]
            subs = [n for n in ready if n.kind == "sub"]
            for n in subs:
                for args in n.members:
                    n.handle.fn(args)
                done.add(n.index)
            if subs:
                continue
            wave, busy = [], set()
            for n in ready:
                ranks = {w for w, _ in n.members}
                if ranks & busy:
                    continue
                busy |= ranks
                wave.append(n)
            calls, owners = [], []
            for n in wave:
                for w, args in n.members:
                    calls.append(self._call(w, n.handle, args, n.config))
                    owners.append(w)
                    if getattr(self, "_trace_dir", None):
                        calls[-1]["trace"] = os.path.join(self._trace_dir, f"wave{len(self.waves)}_rank{w}.json")
            results = self._ranks.run_ranks(calls, prefetch=self.prefetch, advise=getattr(self, "_advise", False))
            self.waves.append(WaveResult(list(zip(owners, results))))
            done |= {n.index for n in wave}

    def _call(self, rank: int, handle: Handle, args, config=None) -> dict:
        tensors = []
        for i, (ref, _tag) in enumerate(getattr(args, "tensors", [])):
            what = f"worker {rank}'s task ({handle.callable.orchestration}): tensor {i}"
            name, _ = _dtype_of(ref.dtype)
            t = {"dtype": name, "shape": list(ref.shapes), "bytes": ref.nbytes}
            lo, hi = ref.span()
            if hi > ref.buffer.nbytes:
                raise ValueError(f"{what}: bytes [{lo}, {hi}) lie beyond its buffer ({ref.buffer.nbytes} bytes)")
            if isinstance(ref.buffer, HostBuffer):
                if ref.buffer.closed:
                    raise ValueError(f"{what}: its buffer {ref.buffer.buffer_id} is closed")
                if lo % _PAGE:
                    raise ValueError(f"{what}: byte offset {lo} in a host buffer is not a multiple of 4096 (pfsim maps "
                                     "a host buffer's pages as the tensor's GM)")
                t.update(file=ref.buffer.path, offset=lo)
            elif ref.buffer.rank != rank:
                raise ValueError(f"{what}: buffer '{ref.buffer.name}' is in rank {ref.buffer.rank}'s GM, not this "
                                 "worker's (reach a peer's window through its CommContext)")
            else:
                t["gm"] = ref.buffer.gm + lo
            if ref.buffer.name:
                t["name"] = ref.buffer.name
            tensors.append(t)
        scalars = [_tensors.scalar_bits(s, f"worker {rank}'s task: scalar {i}")
                   for i, s in enumerate(getattr(args, "scalars", []))]
        call = {"rank": rank, "handle": handle.id, "tensors": tensors, "scalars": scalars}
        env = getattr(config, "runtime_env", None)
        for name in getattr(env, "FIELDS", ()):
            value = getattr(env, name)
            if value:  # 0: the runtime's default
                call[name] = ring_values(name, value)
        return call


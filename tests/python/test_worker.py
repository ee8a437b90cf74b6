"""pfsim.Worker: a persistent simulated die driven from Python."""

import copy
import dataclasses
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

import numpy as np
import pytest
import torch

import pfsim
from pfsim.testing import TaskArgsBuilder, TensorArg


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:  # a zombie is not alive
            return f.read().split(")")[-1].split()[0] != "Z"
    except (ProcessLookupError, FileNotFoundError):  # reaped since the signal test
        return False


def test_a_run_writes_outputs_back_and_reports_tasks_and_counters(prefetch_demo, tmp_path):
    src = torch.arange(128, dtype=torch.float32) / 8
    out = torch.full((128,), -1.0)
    with pfsim.Worker(enable_sdma=True) as worker:
        assert worker.enable_sdma and worker.warmup.startswith("48/48 channels warmed")
        handle = worker.register(prefetch_demo)
        r = worker.run(handle, [src, out], trace=str(tmp_path / "t.json"))
    assert torch.equal(out, src)
    assert r.prefetch and r.time_ns > 0 and r.cycles > 0
    assert [t.cores for t in r.tasks] == [["die.aiv0"]]
    assert r.tasks[0].kernels == ["kernel_prefetch_copy.cpp"] and r.tasks[0].end_ns > r.tasks[0].start_ns
    assert r.counters["sdma"]["requests"] > 0 and r.counters["l2"]["prefetch_lines"] > 0
    events = json.load(open(r.trace))["traceEvents"]
    assert any(e.get("name") == "TPREFETCH_ASYNC" for e in events)


def test_the_die_persists_a_second_run_hits_in_l2_where_the_first_missed(prefetch_demo):
    src = torch.arange(128, dtype=torch.float32)
    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(prefetch_demo)
        first = worker.run(handle, [src, torch.zeros(128)], prefetch=False)
        second = worker.run(handle, [src, torch.zeros(128)], prefetch=False)
    assert first.counters["l2"]["misses"] > 0
    assert second.counters["l2"]["misses"] == 0 and second.counters["l2"]["hits"] > 0
    assert second.time_ns < first.time_ns
    assert second.tasks[0].start_ns > first.tasks[0].end_ns  # simulated time carried over
    # Negative control: a fresh die misses again.
    with pfsim.Worker(enable_sdma=True) as worker:
        fresh = worker.run(worker.register(prefetch_demo), [src, torch.zeros(128)], prefetch=False)
    assert fresh.counters["l2"]["misses"] == first.counters["l2"]["misses"]


def test_judge_gives_check_s_verdict_on_an_off_and_on_pair_naming_a_tensor_that_differs(prefetch_demo):
    src = torch.arange(128, dtype=torch.float32)
    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(prefetch_demo)
        off = worker.run(handle, TaskArgsBuilder(TensorArg("src", src), TensorArg("dst", torch.zeros(128))),
                         prefetch=False)
        on = worker.run(handle, TaskArgsBuilder(TensorArg("src", src), TensorArg("dst", torch.zeros(128))))
        # Only the outputs are hashed (an IN tensor's hash would cost and tell nothing).
        hashes = {o["name"]: o["sha256"] for o in off.summary["outputs"]}
        assert hashes["src"] == "" and len(hashes["dst"]) == 64, hashes
        v = worker.judge(off, on)
        assert v["equivalent"] and v["failure"] == "", v
        assert (v["time_off_ns"], v["time_on_ns"]) == (off.time_ns, on.time_ns)
        assert v["gain_pct"] == pytest.approx(100 * (off.time_ns - on.time_ns) / off.time_ns)
        assert worker.judge(off, on, (-1e9, 1e9))["gain_met"]
        assert not worker.judge(off, on, (v["gain_pct"] + 1, 1e9))["gain_met"]  # the expectation's control
        # The control: an output whose bytes differ, named as the run request named it.
        changed = copy.deepcopy(on.summary)
        dst = next(o for o in changed["outputs"] if o["name"] == "dst")
        dst["sha256"] = "0" * 64
        bad = worker.judge(off, dataclasses.replace(on, summary=changed))
        assert not bad["equivalent"] and bad["failure"] == "output dst differs between prefetch off and on", bad
        with pytest.raises(ValueError, match=r"judge: expected_gain_pct is \[MIN, MAX\]"):
            worker._request({"op": "judge", "off": off.summary, "on": on.summary, "expected_gain_pct": [1]})


MISSING = object()
RUN = {"op": "run", "handle": 0, "data": "/nonexistent", "scalars": [0],
       "tensors": [{"name": "a", "dtype": "int32", "shape": [4], "offset": 0, "bytes": 16}]}
REGISTER = {"op": "register", "orchestration": {"source": "/nonexistent/orch.cpp"},
            "incores": [{"func_id": 0, "source": "/nonexistent/kernel.cpp", "core_type": "aiv"}]}
# (request, a field's path in it, a value of the wrong type or MISSING, the reply's message after "request.")
MISTYPED = [
    (RUN, "op", 5, "op: expected a string, got a number"),
    (RUN, "handle", "x", "handle: expected an integer of 32 bits, got a string"),
    (RUN, "handle", MISSING, "handle: missing"),
    (RUN, "prefetch", 1, "prefetch: expected a boolean, got a number"),
    (RUN, "trace", 5, "trace: expected a string, got a number"),
    (RUN, "sanitize", "yes", "sanitize: expected a boolean, got a string"),
    (RUN, "advise", None, "advise: expected a boolean, got null"),
    (RUN, "inject", "skip-wait", "inject: expected an array, got a string"),
    (RUN, "inject", [5], "inject[0]: expected a string, got a number"),
    (RUN, "scalars[0]", "x", "scalars[0]: expected an integer of 64 bits without sign, got a string"),
    (RUN, "ring_heap", {}, "ring_heap: expected an array, got an object"),
    (RUN, "ring_task_window", [1.5], "ring_task_window[0]: expected an integer of 64 bits without sign, got 1.5"),
    (RUN, "ring_dep_pool", "x", "ring_dep_pool: expected an array, got a string"),
    (RUN, "aicpu_thread_num", -1, "aicpu_thread_num: expected an integer of 32 bits without sign, got -1"),
    (RUN, "data", 5, "data: expected a string, got a number"),
    (RUN, "spans", "x", "spans: expected a boolean, got a string"),
    (RUN, "tasks", 5, "tasks: expected a boolean, got a number"),
    (RUN, "dump_args", "1", "dump_args: expected an integer of 32 bits, got a string"),
    (RUN, "dump_dir", True, "dump_dir: expected a string, got a boolean"),
    (RUN, "scope_stats_dir", [], "scope_stats_dir: expected a string, got an array"),
    (RUN, "deps_json", 1, "deps_json: expected a string, got a number"),
    (RUN, "runtime_slot", 0.5, "runtime_slot: expected an integer of 32 bits, got 0.5"),
    (RUN, "generation", "g", "generation: expected an integer of 64 bits without sign, got a string"),
    (RUN, "tensors", 5, "tensors: expected an array, got a number"),
    (RUN, "tensors[0]", 5, "tensors[0]: expected an object, got a number"),
    (RUN, "tensors[0].name", 5, "tensors[0].name: expected a string, got a number"),
    (RUN, "tensors[0].hash", "md5", 'tensors[0].hash: expected true, false or "digest", got "md5"'),
    (RUN, "tensors[0].offset", "0", "tensors[0].offset: expected an integer of 64 bits without sign, got a string"),
    (RUN, "tensors[0].file", 5, "tensors[0].file: expected a string, got a number"),
    (RUN, "tensors[0].shared", 1, "tensors[0].shared: expected a boolean, got a number"),
    (RUN, "tensors[0].dtype", MISSING, "tensors[0].dtype: missing"),
    (RUN, "tensors[0].shape", [4, "x"], "tensors[0].shape[1]: expected an integer of 32 bits without sign, got a string"),
    (RUN, "tensors[0].bytes", 16.5, "tensors[0].bytes: expected an integer of 64 bits without sign, got 16.5"),
    (REGISTER, "orchestration", 5, "orchestration: expected an object, got a number"),
    (REGISTER, "orchestration.source", 5, "orchestration.source: expected a string, got a number"),
    (REGISTER, "orchestration.function", 5, "orchestration.function: expected a string, got a number"),
    (REGISTER, "orchestration.config", [], "orchestration.config: expected a string, got an array"),
    (REGISTER, "incores", {}, "incores: expected an array, got an object"),
    (REGISTER, "incores[0].func_id", "0", "incores[0].func_id: expected an integer of 32 bits, got a string"),
    (REGISTER, "incores[0].source", MISSING, "incores[0].source: missing"),
    (REGISTER, "incores[0].core_type", 1, "incores[0].core_type: expected a string, got a number"),
    (REGISTER, "include_dirs", "/usr/include", "include_dirs: expected an array, got a string"),
    ({"op": "release", "handle": 12345}, "handle", "0", "handle: expected an integer of 32 bits, got a string"),
    ({"op": "judge", "off": {}, "on": {}}, "expected_gain_pct", ["1", 2], "expected_gain_pct[0]: expected a number, got a string"),
]


def with_field(request, path, value):
    """A deep copy of `request` with the field at `path` ("tensors[0].shape") set to value, or removed."""
    request = copy.deepcopy(request)
    keys = [int(k) if k.isdigit() else k for k in re.findall(r"[^.\[\]]+", path)]
    inner = request
    for k in keys[:-1]:
        inner = inner[k]
    if value is MISSING:
        del inner[keys[-1]]
    else:
        inner[keys[-1]] = value
    return request


@pytest.mark.parametrize("request_, path, value, message", MISTYPED, ids=[f"{m[0]['op']}.{m[1]}" for m in MISTYPED])
def test_a_mistyped_or_missing_field_is_named_by_its_path_and_the_device_serves_on(copy_worker, byte_copy,
                                                                                   request_, path, value, message):
    """Every field the device reads, given a value of the wrong type (or left out), is named in
    the reply by its path in the request, in one wording; nothing of the JSON library's. The
    control: the same request with the field as it was is refused for another reason (nothing
    registered, no such file), or not at all; and the device serves the next request."""
    with pytest.raises(ValueError) as mistyped:
        copy_worker._request(with_field(request_, path, value))
    assert str(mistyped.value) == f"request.{message}"
    try:
        copy_worker._request(request_)
    except Exception as control:  # noqa: BLE001 -- any refusal but this field's
        assert not str(control).startswith(f"request.{path}"), control
    src = torch.arange(16, dtype=torch.int32)
    out = torch.zeros(16, dtype=torch.int32)
    copy_worker.run(copy_worker.register(byte_copy), [src, out, 0])
    assert torch.equal(out, src)


def test_a_result_judge_cannot_read_is_named_by_its_side(copy_worker):
    with pytest.raises(ValueError, match=r"^request\.off: "):
        copy_worker._request({"op": "judge", "off": 5, "on": 5})


def test_outputs_judged_by_digest_instead_of_sha256(prefetch_demo):
    """output_hash="digest" (what pfsim test asks): each output's fast digest in the summary,
    no SHA-256; judge compares the digests as it compares SHA-256s."""
    src = torch.arange(128, dtype=torch.float32)

    def args():
        return TaskArgsBuilder(TensorArg("src", src), TensorArg("dst", torch.zeros(128)))

    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(prefetch_demo)
        off = worker.run(handle, args(), prefetch=False, output_hash="digest")
        on = worker.run(handle, args(), output_hash="digest")
        rows = {o["name"]: o for o in off.summary["outputs"]}
        assert rows["dst"]["sha256"] == "" and len(rows["dst"]["digest"]) == 64, rows
        assert "digest" not in rows["src"], rows  # an input: neither
        assert "digest" not in worker.run(handle, args()).summary["outputs"][1]  # the default: SHA-256 only
        assert worker.judge(off, on)["equivalent"]
        # The control: a digest that differs fails the pair, naming the output.
        changed = copy.deepcopy(on.summary)
        changed["outputs"][1]["digest"] = "0" * 64
        bad = worker.judge(off, dataclasses.replace(on, summary=changed))
        assert not bad["equivalent"] and bad["failure"] == "output dst differs between prefetch off and on", bad
        with pytest.raises(ValueError, match='output_hash = \'md5\': "sha256" or "digest"'):
            worker.run(handle, args(), output_hash="md5")
        request = {"op": "run", "handle": handle.id, "scalars": [], "data": "/nonexistent",
                   "tensors": [{"name": "src", "dtype": "float32", "shape": [128], "offset": 0, "bytes": 512,
                                "hash": "md5"}]}
        with pytest.raises(ValueError, match=r'request\.tensors\[0\]\.hash: expected true, false or "digest", got "md5"'):
            worker._request(request)


def test_a_run_without_task_records_gives_their_count_and_the_same_summary_otherwise(prefetch_demo):
    """tasks=False (what pfsim test asks unless a diagnostic reads the spans, #49): no task list
    in the result or the device's reply, their count instead; all else as with the list."""
    src = torch.arange(128, dtype=torch.float32)
    summaries, results = {}, {}
    for tasks in (True, False):
        with pfsim.Worker(enable_sdma=True) as worker:  # a fresh die each: the same simulation
            handle = worker.register(prefetch_demo)
            results[tasks] = r = worker.run(handle, [src, torch.zeros(128)], tasks=tasks)
            summaries[tasks] = dict(r.summary)
            if not tasks:
                assert worker.judge(r, r)["equivalent"]  # the device reads its own summary back
                with pytest.raises(ValueError, match="spans=True with tasks=False"):
                    worker.run(handle, [src, torch.zeros(128)], tasks=False, spans=True)
                request = {"op": "run", "handle": handle.id, "scalars": [], "data": "/nonexistent", "tensors": [],
                           "tasks": False, "spans": True}
                with pytest.raises(ValueError, match="spans without the tasks' records"):
                    worker._request(request)
    assert len(results[True].tasks) == results[True].task_count == 1  # the control: listed where asked
    assert results[False].tasks == [] and results[False].task_count == 1
    assert "tasks" not in summaries[False] and summaries[False].pop("task_count") == 1
    del summaries[True]["tasks"]
    assert summaries[False] == summaries[True]


TORCH_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.int16, torch.int32, torch.int64,
                torch.uint8, torch.bool]


@pytest.fixture(scope="module")
def copy_worker():
    with pfsim.Worker() as worker:
        yield worker


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_every_torch_dtype_goes_in_and_comes_back_bit_exact(copy_worker, byte_copy, dtype):
    src = (torch.arange(48) * 37 - 500).to(dtype).reshape(4, 12)
    out = torch.zeros_like(src)
    copy_worker.run(copy_worker.register(byte_copy), [src, out, 0])
    assert torch.equal(out.view(torch.uint8), src.view(torch.uint8))


@pytest.mark.parametrize("dtype", ["uint16", "uint32", "uint64", "float32"])
def test_numpy_arrays_too(copy_worker, byte_copy, dtype):
    src = np.arange(40, dtype=dtype) * 3
    out = np.zeros_like(src)
    copy_worker.run(copy_worker.register(byte_copy), [src, out, 0])
    assert np.array_equal(out, src)


def test_inputs_are_not_written_back(copy_worker, byte_copy):
    src = torch.arange(16, dtype=torch.int32)
    keep = src.clone()
    copy_worker.run(copy_worker.register(byte_copy), [src, torch.zeros(16, dtype=torch.int32), 0])
    assert torch.equal(src, keep)


def test_tensors_of_several_pages_and_non_contiguous_outputs_come_back(copy_worker, byte_copy):
    """Each tensor is mapped into GM from its own pages of the transfer file: one of a few pages
    and a bit, then an output that is a transposed view (read back through a copy)."""
    src = torch.arange(3 * 1024 + 5, dtype=torch.int32).reshape(-1)
    out = torch.zeros(src.numel(), dtype=torch.int32)
    copy_worker.run(copy_worker.register(byte_copy), [src, out, 0])
    assert torch.equal(out, src)
    square = torch.arange(64, dtype=torch.float32).reshape(8, 8)
    view = torch.zeros(8, 8).t()
    copy_worker.run(copy_worker.register(byte_copy), [square, view, 0])
    assert torch.equal(view, square)


def test_the_device_refuses_a_tensor_off_a_page_boundary_naming_it(copy_worker, byte_copy):
    """The device maps each tensor's pages of the transfer file as its GM: an offset that is not a
    multiple of 4096 is bad input naming the tensor (the package never writes one: the same call at
    offset 4096 runs)."""
    handle = copy_worker.register(byte_copy)
    path = os.path.join(copy_worker._dir, "args.bin")
    with open(path, "wb") as f:
        f.write(bytes(3 * 4096))
    tensor = {"dtype": "int32", "shape": [16], "bytes": 64}
    request = {"op": "run", "handle": handle.id, "scalars": [0], "data": path, "prefetch": False}
    with pytest.raises(ValueError, match=r"tensor 1: offset 4160 in .*args.bin is not a multiple of 4096"):
        copy_worker._request({**request, "tensors": [{**tensor, "offset": 0}, {**tensor, "offset": 4160}]})
    reply = copy_worker._request({**request, "tensors": [{**tensor, "offset": 0}, {**tensor, "offset": 4096}]})
    assert reply["ok"]
    with pytest.raises(ValueError, match=r"tensor 1: 4096 bytes .* at offset 12288 lie beyond"):
        copy_worker._request({**request, "tensors": [{**tensor, "offset": 0}, {**tensor, "offset": 12288}]})


def test_a_dtype_a2a3_has_no_name_for_is_refused(copy_worker, byte_copy):
    with pytest.raises(TypeError, match=r"argument arg0: dtype torch.complex64 has no a2a3 DataType"):
        copy_worker.run(copy_worker.register(byte_copy), [torch.zeros(4, dtype=torch.complex64), torch.zeros(4), 0])


def test_tensors_after_scalars_are_refused(copy_worker, byte_copy):
    with pytest.raises(ValueError, match="argument arg2: tensors must come before scalars"):
        copy_worker.run(copy_worker.register(byte_copy), [torch.zeros(4), 0, torch.zeros(4)])


def test_an_sdma_callable_on_a_worker_without_enable_sdma_is_refused_before_anything_runs(prefetch_demo):
    out = torch.full((128,), -1.0)
    with pfsim.Worker() as worker:
        handle = worker.register(prefetch_demo)
        with pytest.raises(RuntimeError) as e:
            worker.run(handle, [torch.ones(128), out])
        assert str(e.value) == "ChipWorker was created without enable_sdma=True"
        assert torch.equal(out, torch.full((128,), -1.0))


def test_a_platform_without_an_sdma_provider_fails_enable_sdma():
    with pytest.raises(RuntimeError, match=r"^async-DMA workspace provisioning \(mask=1\) failed with code -1$"):
        pfsim.Worker(enable_sdma=True, set={"sdma.provider": "none"})
    with pfsim.Worker(set={"sdma.provider": "none"}) as worker:  # control: without SDMA it starts
        assert not worker.enable_sdma


def test_a_bad_configuration_key_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match="l2.sise"):
        pfsim.Worker(set={"l2.sise": "1MiB"})


def test_a_compile_error_carries_the_compilers_output(tmp_path, byte_copy):
    bad = tmp_path / "bad.cpp"
    bad.write_text('#include "tensor.h"\nextern "C" void kernel_entry(__gm__ int64_t* args) { undefined_thing(); }\n')
    byte_copy.incores[0]["source"] = str(bad)
    with pfsim.Worker() as worker, pytest.raises(pfsim.CompileError, match=r"bad.cpp:2:.*undefined_thing"):
        worker.register(byte_copy)


def test_a_missing_source_is_named(byte_copy):
    byte_copy.incores[0]["source"] = "/nonexistent/kernel.cpp"
    with pfsim.Worker() as worker, pytest.raises(FileNotFoundError, match="/nonexistent/kernel.cpp"):
        worker.register(byte_copy)


def kernel_with(tmp_path, callable_, body):
    src = tmp_path / "k.cpp"
    src.write_text('#include <cstdint>\n#include "tensor.h"\n'
                   'extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {\n'
                   '    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);\n'
                   f'    {body}\n}}\n')
    return pfsim.Callable(**{**callable_.__dict__, "incores": [{"func_id": 0, "source": str(src), "core_type": "aiv"}]})


def test_a_kernel_fault_is_a_run_error_naming_the_task_and_the_worker_goes_on(tmp_path, byte_copy):
    wild = kernel_with(tmp_path, byte_copy, "reinterpret_cast<__gm__ uint8_t*>(in->buffer.addr)[1 << 24] = 1;")
    with pfsim.Worker() as worker:
        with pytest.raises(pfsim.RunError, match=r"task 0 \(aiv, func 0\) block 0 on die\.aiv0 .*k\.cpp.*outside every"):
            worker.run(worker.register(wild), [torch.zeros(4), torch.zeros(4), 0])
        out = torch.zeros(8)
        worker.run(worker.register(byte_copy), [torch.ones(8), out, 0])
        assert torch.equal(out, torch.ones(8))


def test_a_kernel_that_faults_the_host_is_a_named_error_and_leaves_no_process(tmp_path, byte_copy):
    crash = kernel_with(tmp_path, byte_copy, "*reinterpret_cast<volatile int*>(8) = 1;  // not GM: the host faults")
    worker = pfsim.Worker()
    pid = worker.pid
    with pytest.raises(pfsim.RunError, match=r"block 0 on die\.aiv0 .*k\.cpp.*SIGSEGV \(invalid memory access at 0x8\)"):
        worker.run(worker.register(crash), [torch.zeros(4), torch.zeros(4), 0])
    deadline = time.monotonic() + 10  # the device ends after its reply: its die is not run on
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(pid)
    worker.close()


def test_a_run_past_its_timeout_stops_the_device_and_leaves_no_process(byte_copy):
    worker = pfsim.Worker(set={"orch.time_limit": "100s"})
    handle = worker.register(byte_copy)
    pid = worker.pid
    start = time.monotonic()
    with pytest.raises(TimeoutError, match="did not answer within 0.5 s"):
        worker.run(handle, [torch.zeros(4), torch.zeros(4), 1 << 40], timeout=0.5)
    assert time.monotonic() - start < 10
    assert not alive(pid)
    with pytest.raises(RuntimeError, match="closed"):
        worker.run(handle, [torch.zeros(4), torch.zeros(4), 0])
    worker.close()


def test_a_device_killed_midway_is_an_error_not_a_hang(byte_copy):
    worker = pfsim.Worker(set={"orch.time_limit": "100s"})
    handle = worker.register(byte_copy)
    pid = worker.pid
    threading.Timer(0.5, os.kill, (pid, signal.SIGKILL)).start()
    with pytest.raises(pfsim.DeviceDied, match="killed by signal 9"):
        worker.run(handle, [torch.zeros(4), torch.zeros(4), 1 << 40])
    assert not alive(pid)
    worker.close()


def test_a_closed_worker_or_a_device_killed_from_outside_is_named(byte_copy):
    worker = pfsim.Worker()
    handle = worker.register(byte_copy)
    worker.close()
    with pytest.raises(RuntimeError, match=r"the worker is closed \(by close\(\)"):
        worker.run(handle, [torch.zeros(4), torch.zeros(4), 0])
    killed = pfsim.Worker()
    handle = killed.register(byte_copy)
    os.kill(killed.pid, signal.SIGKILL)
    time.sleep(0.2)
    with pytest.raises(pfsim.DeviceDied, match=r"died \(killed by signal 9\)"):
        killed.run(handle, [torch.zeros(4), torch.zeros(4), 0])
    killed.close()


def test_runs_from_two_threads_on_one_worker_take_turns(copy_worker, byte_copy):
    handle = copy_worker.register(byte_copy)
    failures = []

    def runs(value):
        for _ in range(10):
            out = torch.zeros(8)
            try:
                copy_worker.run(handle, [torch.full((8,), float(value)), out, 0])
            except Exception as e:  # noqa: BLE001 -- any failure is the finding
                failures.append(repr(e))
            if not torch.equal(out, torch.full((8,), float(value))):
                failures.append(f"thread {value}: {out}")

    threads = [threading.Thread(target=runs, args=(v,)) for v in (1, 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert failures == []


def test_a_client_killed_leaves_no_device_and_no_tensor_folder(tmp_path):
    script = ("import pfsim, sys\n"
              "w = pfsim.Worker()\n"
              "print(w.pid, w._dir, flush=True)\n"
              "sys.stdin.read()\n")
    client = subprocess.Popen([sys.executable, "-c", script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONPATH": os.path.dirname(os.path.dirname(pfsim.__file__))})
    pid, folder = client.stdout.readline().split()
    assert alive(int(pid)) and os.path.isdir(folder)
    client.kill()
    client.wait()
    deadline = time.monotonic() + 10
    while (alive(int(pid)) or os.path.exists(folder)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive(int(pid))
    assert not os.path.exists(folder)


def test_closing_stops_the_device_process(byte_copy):
    worker = pfsim.Worker()
    pid = worker.pid
    assert alive(pid)
    worker.close()
    assert not alive(pid) and worker.pid is None


def test_a_missing_symbol_names_the_source_and_the_symbol(byte_copy):
    byte_copy.function = "no_such_entry"
    with pfsim.Worker() as worker, pytest.raises(ValueError, match=r"byte_copy_orch\.cpp.*no symbol 'no_such_entry'"):
        worker.register(byte_copy)


def test_scalars_reach_the_kernel_as_simpler_packs_them():
    import ctypes
    import struct

    from pfsim._tensors import scalar_bits
    assert scalar_bits(5, "s") == 5
    assert scalar_bits(-1, "s") == (1 << 64) - 1
    assert scalar_bits(1.5, "s") == struct.unpack("<I", struct.pack("<f", 1.5))[0]  # a Python float is f32
    assert scalar_bits(ctypes.c_double(1.5), "s") == struct.unpack("<Q", struct.pack("<d", 1.5))[0]
    assert scalar_bits(ctypes.c_int32(-2), "s") == (1 << 64) - 2
    assert scalar_bits(np.float32(1.5), "s") == scalar_bits(1.5, "s")
    assert scalar_bits(np.int64(7), "s") == 7
    with pytest.raises(OverflowError, match="s: 18446744073709551616 does not fit in 64 bits"):
        scalar_bits(1 << 64, "s")
    with pytest.raises(TypeError, match="s: a scalar must be an int, a float or a ctypes value, not str"):
        scalar_bits("7", "s")


def test_the_device_command_refuses_a_bad_descriptor_clearly():
    import subprocess
    r = subprocess.run([pfsim.find_binary(), "device", "--in-fd", "x"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and r.stdout == ""
    assert "device: --in-fd takes a file descriptor number, not 'x'" in r.stderr


def test_an_injected_sdma_error_is_reported_and_the_values_stay_right(prefetch_demo):
    src = torch.arange(128, dtype=torch.float32) / 8
    with pfsim.Worker(enable_sdma=True) as worker:
        handle = worker.register(prefetch_demo)
        out = torch.full((128,), -1.0)
        faulty = worker.run(handle, [src, out], inject=["sdma-error"])
        assert torch.equal(out, src)  # the prefetch changes no value: the copy is right
        [fault] = faulty.faults
        assert fault["kind"] == "sdma-error" and fault["error"] == "injected_fault" and fault["post"]["id"] == 1
        assert any("prefetch waits returned false" in w for w in faulty.warnings)
        assert faulty.summary["cores"]["prefetch_wait_timeouts"] == 1
        # The fault is this run's only, but its channel stays stopped, as a
        # hardware channel in error does: the next run's wait fails too, unreported as a fault.
        later = worker.run(handle, [src, torch.zeros(128)])
        assert later.faults == [] and later.summary["cores"]["prefetch_wait_timeouts"] == 1
        assert [c["error"] for c in later.summary["sdma"]["channels"] if c["channel"] == fault["channel"]] == ["injected_fault"]
        with pytest.raises(ValueError, match="unknown fault 'gremlins'"):
            worker.run(handle, [src, torch.zeros(128)], inject=["gremlins"])
        # The fatal close a core trap leads to is modelled for `pfsim run` only: refused, named.
        with pytest.raises(ValueError, match="inject core-fault: only `pfsim run` models the fatal close"):
            worker.run(handle, [src, torch.zeros(128)], inject=["core-fault"])


def test_a_run_that_takes_long_says_so_on_stderr(capfd):
    """The device process reports a run still going (Worker(progress=S)); 0 is quiet."""
    chain = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/vector_chain_orch.cpp",
                          "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.IN, pfsim.ArgDirection.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_add.cpp", "core_type": "aiv"},
                    {"func_id": 1, "source": "kernels/aiv/kernel_scale.cpp", "core_type": "aiv"}]},
        os.path.join(os.path.dirname(os.path.abspath(__file__)), "../../cases/vector_chain"))
    n = 1 << 18
    a, b = torch.arange(n, dtype=torch.float32), torch.ones(n)
    for every, said in ((1e-4, True), (0, False)):
        with pfsim.Worker(progress=every) as worker:
            out = torch.zeros(n)
            worker.run(worker.register(chain), [a, b, out, 8])
            assert torch.equal(out, 2 * (a + b) + a)
        err = capfd.readouterr().err
        assert ("pfsim device: vector_chain_orch: still running, " in err) == said, err


def test_an_input_in_a_memory_file_is_mapped_without_a_copy_and_the_kernels_writes_never_reach_the_file(byte_copy):
    """A scene test's arguments live in memory files (_tensors.copy_on_write): a run maps an
    input's file privately as its GM instead of copying it into the transfer file."""
    from pfsim import _tensors
    n = 1 << 18  # 1 MiB of int32: large enough to be mapped
    args = TaskArgsBuilder(TensorArg("src", torch.arange(n, dtype=torch.int32)),
                           TensorArg("dst", torch.zeros(n, dtype=torch.int32)))
    golden = args.copy_on_write_clone()
    assert _tensors.memory_file(args.src) and _tensors.memory_file(args.dst)
    assert _tensors.memory_file(golden.src) is None and _tensors.memory_file(args.src[1:]) is None
    both_in = dataclasses.replace(byte_copy, signature=[pfsim.ArgDirection.IN, pfsim.ArgDirection.IN])
    out = torch.zeros(n, dtype=torch.int32)
    with pfsim.Worker() as worker:
        worker.run(worker.register(byte_copy), [args.src, out, 0])
        assert torch.equal(out, torch.arange(n, dtype=torch.int32))  # the file's bytes reached the kernel
        worker.run(worker.register(both_in), [args.src, args.dst, 0])
        assert int(args.dst.abs().sum()) == 0  # the kernel wrote dst in the die only
        # the negative control: the same tensor as an output is written (through the transfer file)
        worker.run(worker.register(byte_copy), [args.src, args.dst, 0])
        assert torch.equal(args.dst, args.src)
        # a tensor's file the device cannot open, or a tensor with neither file nor transfer file, is named
        t = {"name": "a", "dtype": "int32", "shape": [1024], "offset": 0, "bytes": 4096}
        with pytest.raises(ValueError, match="tensor 0: cannot open /nonexistent: No such file"):
            worker._request({"op": "run", "handle": 0, "tensors": [dict(t, file="/nonexistent")], "scalars": [0]})
        with pytest.raises(ValueError, match='tensor 0 without a "data" or "file"'):
            worker._request({"op": "run", "handle": 0, "tensors": [t], "scalars": [0]})


def test_an_output_in_its_own_memory_file_is_written_in_place(byte_copy, monkeypatch):
    """A scene test's outputs are copies in memory files of their own (fresh_outputs,
    _tensors.shared_copy): the device maps each file shared as the output's GM and the
    kernels' writes land in it, nothing read back from the transfer file. Negative control:
    a plain output tensor is read back from the transfer file. A size that is not whole
    pages maps too (the memory file is rounded up to pages, inputs' as outputs')."""
    from pfsim import _tensors
    read_back = []
    real_read_into = _tensors.read_into
    monkeypatch.setattr(_tensors, "read_into", lambda value, f: (read_back.append(value), real_read_into(value, f)))
    n = (1 << 18) + 3  # int32: a megabyte and 12 bytes, not whole pages
    src = torch.arange(n, dtype=torch.int32)
    args = TaskArgsBuilder(TensorArg("src", src.clone()), TensorArg("dst", torch.full((n,), -1, dtype=torch.int32)))
    args.copy_on_write_clone()  # the arguments move into memory files, as a scene test's do
    assert _tensors.memory_file(args.src)
    run_args = args.fresh_outputs(["dst"])
    assert _tensors.memory_file(run_args.dst) and run_args.dst.data_ptr() != args.dst.data_ptr()
    assert torch.equal(run_args.dst, args.dst)  # the copy starts from the output's values
    with pfsim.Worker() as worker:
        handle = worker.register(byte_copy)
        worker.run(handle, [run_args.src, run_args.dst, 0])
        assert torch.equal(run_args.dst, src) and read_back == []  # written in place
        assert int((args.dst != -1).sum()) == 0  # the arguments' own output is untouched
        plain = torch.zeros(n, dtype=torch.int32)
        worker.run(handle, [run_args.src, plain, 0])
        assert torch.equal(plain, src) and len(read_back) == 1 and read_back[0] is plain
        t = {"name": "a", "dtype": "int32", "shape": [1024], "offset": 0, "bytes": 4096}
        with pytest.raises(ValueError, match='tensor 0: "shared" without its own "file"'):
            worker._request({"op": "run", "handle": 0, "tensors": [dict(t, shared=True)], "scalars": [0],
                             "data": "/dev/null"})
    small = torch.ones(16)
    assert _tensors.memory_file(_tensors.shared_copy(small)) is None  # small tensors are plain clones

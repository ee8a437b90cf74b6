"""The shipped level-3 case moe_step (two dies: dispatch, expert FFN beside a
weight warm, combine) under `pfsim check` and the advisor, and level-3 case
files' refusals."""

import json
import os
import subprocess

import pytest

import pfsim._device
from conftest import marked_line

HERE = os.path.dirname(os.path.abspath(__file__))
CASE = os.path.join(HERE, "..", "..", "cases", "moe_step", "case.toml")
WARM = os.path.join(HERE, "..", "..", "cases", "moe_step", "kernels", "aiv", "kernel_warm.cpp")


def pfsim_json(*args):
    p = subprocess.run([pfsim._device.find_binary(), *args, "--json"], capture_output=True, text=True, timeout=600)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def test_the_warm_speeds_the_ffn_and_slows_the_combine_behind_it_and_the_advisor_measures_why():
    [row] = pfsim_json("check", CASE, "--advise")["kernels"]
    assert row["verdict"] == "pass", row  # both ranks' outputs equal their goldens, off and on bit for bit
    tasks = {t["name"]: t for t in row["tasks"]}
    for rank in (0, 1):
        ffn = tasks[f"rank {rank}: task 2 (aiv, func 2)"]
        combine = tasks[f"rank {rank}: task 3 (aiv, func 3)"]
        assert ffn["kernels"] == ["kernel_ffn.cpp"] and combine["kernels"] == ["kernel_combine.cpp"]
        assert ffn["time_on_ns"] < 0.75 * ffn["time_off_ns"]  # its weights come from L2
        assert combine["time_on_ns"] > 2 * combine["time_off_ns"]  # its copy waits behind the warm
    [advice] = row["advisor"]["advice"]
    assert advice["verdict"] == "delays_comm" and advice["where"] == marked_line(WARM, "// moe: the warm")
    assert "kernel_warm.cpp, task 1 (aiv, func 1) block 0 on rank0.aiv0" in advice["message"]
    assert "TPUT_ASYNC at moe.h:" in advice["message"]
    assert "kernel_combine.cpp, task 3 (aiv, func 3) block 0 on rank1.aiv0" in advice["message"]
    # Measured: without the warm the copies wait for no prefetch; the run is the prefetch-off run.
    assert advice["comm_wait_ns"] > 50_000 and advice["without_comm_wait_ns"] == 0
    assert advice["without_ns"] == pytest.approx(row["advisor"]["what_if"]["prefetch_off_ns"])
    assert advice["without_ns"] < row["time_on_ns"]


def test_a_warm_on_another_ring_delays_no_copy_and_gets_no_such_advice(tmp_path):
    # The control: the same step with the warm posted from another cluster's core.
    trace = tmp_path / "trace.json"
    run = pfsim_json("run", CASE, "--arg", "warm_block=2", "--advise", "--no-what-if", "--trace", str(trace))
    assert run["reference_equal"] and run["ranks"] == 2
    assert run["sdma"]["comm_copies"] == 4 and run["sdma"]["comm_prefetch_wait"] == 0
    assert run["advisor"]["advice"] == [] and run["advisor"]["ranks"] == 2
    # One trace per die, each with its own die's SDMA lanes: the peer put of its combine.
    assert not trace.exists() and not [w for w in run["warnings"] if w.startswith("--trace")]
    for rank in (0, 1):
        events = json.loads((tmp_path / f"trace.rank{rank}.json").read_text())["traceEvents"]
        puts = [e for e in events if e.get("name") == "peer put"]
        assert puts and all(e["args"]["rank"] == 1 - rank for e in puts)


@pytest.mark.parametrize("top, tables, complaint", [
    ("ranks = 65\nwindow_bytes = 64\n", "", "ranks: must be 1 to 64, not 65"),
    ("ranks = 2\n", "", "window_bytes: missing"),
    ("window_bytes = 64\n", "", "window_bytes: is for a level-3 case (ranks > 1)"),
    ("", '[[scalars]]\nname = "c"\ntype = "comm_context"\n', "scalars.type: comm_context is for a level-3 case (ranks > 1)"),
])
def test_a_level3_case_file_is_refused_naming_the_key(tmp_path, top, tables, complaint):
    case = tmp_path / "case.toml"
    case.write_text(top + '[orchestration]\nsource = "o.cpp"\n[[incores]]\nfunc_id = 0\nsource = "k.cpp"\ncore_type = "aiv"\n' + tables)
    p = subprocess.run([pfsim._device.find_binary(), "run", str(case)], capture_output=True, text=True, timeout=60)
    assert p.returncode == 2 and complaint in p.stderr, p.stderr


def moe_callable():
    import pfsim
    case = os.path.dirname(CASE)
    aiv = os.path.join(case, "kernels", "aiv")
    kernels = ["kernel_dispatch.cpp", "kernel_warm.cpp", "kernel_ffn.cpp", "kernel_combine.cpp", "kernel_gather.cpp"]
    return pfsim.Callable(orchestration=os.path.join(case, "kernels", "orchestration", "moe_step_orch.cpp"),
                          incores=[{"func_id": i, "source": os.path.join(aiv, k), "core_type": "aiv"}
                                   for i, k in enumerate(kernels)])


@pytest.mark.parametrize("warm_block, advised", [(0, True), (2, False)])
def test_a_level3_worker_run_with_advise_names_the_warm_that_delayed_the_combine(warm_block, advised):
    # The same step from Python (pfsim.level3): the advice, not measured; the control
    # (the warm from another cluster's core) gets none.
    from pfsim.level3 import L3Worker
    from pfsim.task_interface import CommBufferSpec, DataType, TaskArgs, TensorArgType
    window = 2 * (512 << 10) + 128  # moe.h's kWindowBytes
    shapes = [((131072,), DataType.FLOAT32), ((512 * 4096,), DataType.FLOAT32), ((1536 * 4096,), DataType.FLOAT32),
              ((131072,), DataType.FLOAT32), ((16,), DataType.INT32), ((16,), DataType.INT32),
              ((131072,), DataType.FLOAT32)]
    kinds = [TensorArgType.INPUT] * 3 + [TensorArgType.OUTPUT_EXISTING] * 4
    with L3Worker(device_count=2, num_sub_workers=1, enable_sdma=True) as w:
        handle = w.register(moe_callable())
        buffers = [[w.create_buffer(4 * n[0][0]) for n in shapes] for _ in range(2)]

        def orch_fn(orch, _args, _config):
            with orch.allocate_domain(name="moe", workers=[0, 1], window_size=window,
                                      buffers=[CommBufferSpec("window", "int32", window // 4, window)]) as d:
                for rank in (0, 1):
                    args = TaskArgs()
                    for buffer, (shape, dtype), kind in zip(buffers[rank], shapes, kinds):
                        args.add_tensor(buffer.tensor(shape, dtype), kind)
                    args.add_scalar(warm_block)
                    args.add_scalar(d[rank].device_ctx)
                    orch.submit_next_level(handle, args, worker=rank)

        [wave] = w.run(orch_fn, advise=True)
        for _rank, result in wave.results:
            assert result.advisor["ranks"] == 2
            verdicts = [(a["where"], a["verdict"]) for a in result.advisor["advice"]]
            assert verdicts == ([(marked_line(WARM, "// moe: the warm"), "delays_comm")] if advised else [])
            if advised:
                assert result.advisor["advice"][0]["comm_wait_ns"] > 50_000
                assert result.advisor["advice"][0]["without_comm_wait_ns"] is None  # not measured from Python

"""pfsim.level3: several dies of one simulation from Python (simpler's L3 worker
shape), on pfsim's own two-rank scene (tests/comm/scene: its orchestrations and
kernels, compiled at run time as users' are).

Rank r runs on die r; what crosses between ranks crosses the modelled link and
SDMA engine: the fetch is rank r's SDMA engine reading the peer's window, the
exchange a TPUT and TNOTIFY into the peer's window, a TWAIT on the own one."""

import copy
import json
import os
import re
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import forked_pytest
import pytest
import torch

import pfsim
import pfsim.level3
from pfsim.level3 import L3Worker
from pfsim.task_interface import CommBufferSpec, DataType, TaskArgs, TensorArgType

HERE = os.path.dirname(os.path.abspath(__file__))
SCENE = os.path.normpath(os.path.join(HERE, "..", "comm", "scene"))
ELEMS = 1024                       # scene.h's kElems
WINDOW = ELEMS * 4 + 64            # the data, then the signal
F32 = DataType.FLOAT32


def scene_callable():
    return pfsim.Callable(
        orchestration=os.path.join(SCENE, "exchange_orch.cpp"), function="exchange_orchestration",
        config="exchange_config",
        incores=[{"func_id": i, "source": os.path.join(SCENE, name), "core_type": "aiv"}
                 for i, name in enumerate(["put_notify.cpp", "wait_add.cpp", "sdma_get.cpp", "add_one.cpp"])],
        include_dirs=[SCENE])


def input_of(rank):
    return torch.tensor([float(rank * 1000 + i % 251) / 4 for i in range(ELEMS)], dtype=torch.float32)


def floats(buffer):
    return torch.frombuffer(buffer.shm.buf, dtype=torch.float32, count=ELEMS)


@pytest.fixture(scope="module")
def pair():
    """Two dies of one simulation with SDMA, the scene's callables registered: (worker, {function: handle})."""
    with L3Worker(device_count=2, num_sub_workers=1, enable_sdma=True, set={"orch.time_limit": "200us"}) as w:
        handles = {}
        for function in ("exchange_orchestration", "fetch_orchestration", "lonely_orchestration"):
            c = scene_callable()
            c.function = function
            handles[function] = w.register(c)
        yield w, handles


def run_scene(worker, handle, tensors_of, window_data=None, sub=None, window_size=WINDOW):
    """Each rank's call of `handle` with tensors_of(rank) (host buffers: tagged INPUT, then
    OUTPUT_EXISTING) and its CommContext, in a domain over both ranks."""
    def orch_fn(orch, _args, _config):
        with orch.allocate_domain(name="pair", workers=[0, 1], window_size=window_size,
                                  buffers=[CommBufferSpec("data", "float32", ELEMS, ELEMS * 4)]) as d:
            for rank in (0, 1):
                if window_data is not None:  # both windows before either task (a peer reads it)
                    orch.copy_to(d[rank].buffers["data"], window_data[rank])
            for rank in (0, 1):
                args = TaskArgs()
                first, second = tensors_of(rank)
                args.add_tensor(first.tensor((ELEMS,), F32), TensorArgType.INPUT)
                args.add_tensor(second.tensor((ELEMS,), F32), TensorArgType.OUTPUT_EXISTING)
                args.add_scalar(d[rank].device_ctx)
                orch.submit_next_level(handle, args, worker=rank)
                if sub is not None:
                    check = TaskArgs()
                    check.add_tensor(second.tensor((ELEMS,), F32), TensorArgType.INPUT)
                    orch.submit_sub(sub, check)
    return worker.run(orch_fn)


def test_a_fetch_crosses_to_the_peer_through_the_sdma_engine(pair):
    worker, handles = pair
    fetched = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    result = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    seen = []
    sub = worker.register_sub(lambda args: seen.append(floats(args.tensors[0][0].buffer).clone()), "check")
    # fetch_orchestration's tensors: fetched (written by the SDMA copy), result = fetched + 1
    waves = run_scene(worker, handles["fetch_orchestration"], lambda r: (fetched[r], result[r]),
                      window_data=[input_of(0), input_of(1)], sub=sub)
    # The buffers' files are unlinked (named through this process's descriptors): nothing is left
    # behind in the worker's folder if this process dies.
    assert os.listdir(worker._ranks._dir) == []
    for rank in (0, 1):
        assert torch.equal(floats(fetched[rank]), input_of(1 - rank)), rank
        assert torch.equal(floats(result[rank]), input_of(1 - rank) + 1), rank
    # Both ranks' graphs ran together in one wave, then the sub tasks read what they wrote.
    assert [sorted(w for w, _ in wave.results) for wave in waves] == [[0, 1]]
    assert len(seen) == 2 and all(torch.equal(s, input_of(1 - r) + 1) for r, s in enumerate(seen))
    for _, res in waves[0].results:
        copy, add = res.tasks
        assert add.start_ns >= copy.end_ns  # the consumer waited for the copy's completion
        # the peer window's data and its completion flag, through this die's SDMA engine
        assert res.counters["sdma"]["copy_requests"] == 2 and res.counters["sdma"]["copy_bytes"] >= ELEMS * 4
        # of them one crossed to the peer (its flag is local), behind no prefetch
        assert res.counters["sdma"]["comm_copies"] == 1 and res.counters["sdma"]["comm_prefetch_wait"] == 0


def test_each_rank_of_a_level3_run_can_be_traced(pair, tmp_path):
    """run(trace=DIR) records each chip task's die: rank r's fetch is a `peer get` slice on its
    die's SDMA lanes naming the peer, beside the run's tasks; a run without it records nothing."""
    worker, handles = pair
    fetched = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    result = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    tensors = lambda r: (fetched[r], result[r])
    data = [input_of(0), input_of(1)]
    orch = lambda o, a, c: None  # noqa: E731 (the scene's domain and calls come from run_scene)
    waves = worker.run(orch, trace=str(tmp_path / "none"))
    assert waves == [] and os.listdir(tmp_path / "none") == []
    real_run = worker.run
    worker.run = lambda orch_fn: real_run(orch_fn, trace=str(tmp_path / "t"))
    try:
        waves = run_scene(worker, handles["fetch_orchestration"], tensors, window_data=data)
    finally:
        del worker.run
    assert sorted(os.listdir(tmp_path / "t")) == ["wave0_rank0.json", "wave0_rank1.json"]
    for rank, res in waves[0].results:
        assert res.trace == str(tmp_path / "t" / f"wave0_rank{rank}.json")
        events = json.loads(open(res.trace).read())["traceEvents"]
        gets = [e for e in events if e.get("name") == "peer get"]
        assert len(gets) == 1 and gets[0]["args"]["rank"] == 1 - rank, gets
        assert any(e.get("name", "").startswith("task 0") for e in events)  # the run's tasks
    before = set(os.listdir(tmp_path / "t"))
    run_scene(worker, handles["fetch_orchestration"], tensors, window_data=data)  # untraced
    assert set(os.listdir(tmp_path / "t")) == before


def test_an_exchange_through_windows_and_signals(pair):
    worker, handles = pair
    inputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    outputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    for rank in (0, 1):
        floats(inputs[rank])[:] = input_of(rank)
    run_scene(worker, handles["exchange_orchestration"], lambda r: (inputs[r], outputs[r]))
    for rank in (0, 1):
        assert torch.equal(floats(outputs[rank]), input_of(1 - rank) + 1), rank


def test_a_wait_nobody_notifies_stops_naming_the_signal(pair):
    """The negative control of the exchange: the waiting task alone on each rank."""
    worker, handles = pair
    inputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    outputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    with pytest.raises(pfsim.RunError) as e:
        run_scene(worker, handles["lonely_orchestration"], lambda r: (inputs[r], outputs[r]))
    assert "rank 0: " in str(e.value)
    assert "wait_add.cpp) at wait_add.cpp:11 in TWAIT on the signal at GM" in str(e.value)
    assert "no TNOTIFY wrote it" in str(e.value)


def test_the_comm_window_is_an_exact_limit():
    """The exchange puts ELEMS floats at the peer window's start and notifies the int32 signal
    right after them: a window of exactly those bytes passes; one byte fewer fails naming the
    window, though the die's GM goes on past it (the window's pages and the CommContext after
    them are allocated: only the window's size refuses the notify)."""
    exact = ELEMS * 4 + 4
    with L3Worker(device_count=2, set={"orch.time_limit": "200us"}) as worker:
        handle = worker.register(scene_callable())  # the exchange
        inputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
        outputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
        for rank in (0, 1):
            floats(inputs[rank])[:] = input_of(rank)
        run_scene(worker, handle, lambda r: (inputs[r], outputs[r]), window_size=exact)
        for rank in (0, 1):
            assert torch.equal(floats(outputs[rank]), input_of(1 - rank) + 1), rank
        with pytest.raises(pfsim.RunError) as e:
            run_scene(worker, handle, lambda r: (inputs[r], outputs[r]), window_size=exact - 1)
    message = str(e.value)
    assert "TNOTIFY: the signal (4 bytes at " in message, message
    assert "communication window (GM " in message and f" + 4; the window is GM " in message, message
    assert f" + {exact - 1}, CommContext.winSize)" in message, message


def test_misuse_is_refused_by_name(pair):
    worker, handles = pair
    out = worker.create_buffer(ELEMS * 4)

    def peer_window(orch, _a, _c):
        with orch.allocate_domain(name="w", workers=[0, 1], window_size=WINDOW,
                                  buffers=[CommBufferSpec("data", "float32", ELEMS, ELEMS * 4)]) as d:
            args = TaskArgs()
            args.add_tensor(d[1].buffers["data"].tensor((ELEMS,), F32), TensorArgType.INPUT)
            args.add_tensor(out.tensor((ELEMS,), F32), TensorArgType.OUTPUT_EXISTING)
            args.add_scalar(d[0].device_ctx)
            orch.submit_next_level(handles["fetch_orchestration"], args, worker=0)
    with pytest.raises(ValueError, match="buffer 'data' is in rank 1's GM, not this worker's"):
        worker.run(peer_window)

    def oversized(orch, _a, _c):
        orch.allocate_domain(name="big", workers=[0], window_size=64,
                             buffers=[CommBufferSpec("data", "float32", ELEMS, ELEMS * 4)])
    with pytest.raises(ValueError, match="its buffers take 4096 bytes, more than window_size=64"):
        worker.run(oversized)
    with pytest.raises(ValueError, match="worker=2 is not one of the 2 chip workers"):
        worker.run(lambda orch, _a, _c: orch.submit_next_level(handles["fetch_orchestration"], TaskArgs(), worker=2))
    with pytest.raises(NotImplementedError, match="orch.allocate_global_domain: a network of nodes"):
        worker.run(lambda orch, _a, _c: orch.allocate_global_domain(name="g", members=[], window_size=64))
    with pytest.raises(NotImplementedError, match="load_from_host=True is not modelled"):
        CommBufferSpec("x", "float32", 1, 4, load_from_host=True)
    # The worker still runs after each refusal (its domains were freed).
    test_an_exchange_through_windows_and_signals(pair)


SCENE_TEST = """
import torch
import pytest
from simpler.task_interface import ArgDirection as D
from simpler.task_interface import CommBufferSpec, DataType, TaskArgs, TensorArgType
from simpler_setup import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from simpler_setup.scene_test import _rehosted_buffer_for, _rehosted_ref_for

N = 1024
SCENE = {scene!r}


def orch_fn(orch, callables, task_args, config):
    with orch.allocate_domain(name="d", workers=[0, 1], window_size=N * 4 + 64,
                              buffers=[CommBufferSpec("w", "float32", N, N * 4)]) as d:
        for rank in range(2):
            orch.copy_to(d[rank].buffers["w"], _rehosted_buffer_for(task_args, getattr(task_args, f"in_{{rank}}")))
        for rank in range(2):
            args = TaskArgs()
            args.add_tensor(_rehosted_ref_for(task_args, getattr(task_args, f"got_{{rank}}")),
                            TensorArgType.OUTPUT_EXISTING)
            args.add_tensor(_rehosted_ref_for(task_args, getattr(task_args, f"out_{{rank}}")),
                            TensorArgType.OUTPUT_EXISTING)
            args.add_scalar(d[rank].device_ctx)
            orch.submit_next_level(callables.fetch, args, config, worker=rank)


@pytest.mark.sdma
@scene_test(level=3, runtime="tensormap_and_ringbuffer")
class TestFetch(SceneTestCase):
    CALLABLE = {{
        "orchestration": orch_fn,
        "callables": [{{
            "name": "fetch",
            "orchestration": {{"source": SCENE + "/exchange_orch.cpp", "function_name": "fetch_orchestration",
                              "config_name": "exchange_config", "signature": [D.OUT, D.OUT, D.IN]}},
            "incores": [{{"func_id": i, "source": SCENE + "/" + s, "core_type": "aiv",
                         "extra_include_dirs": [SCENE]}}
                        for i, s in enumerate(["put_notify.cpp", "wait_add.cpp", "sdma_get.cpp", "add_one.cpp"])],
        }}],
    }}
    CASES = [{{"name": "peer", "platforms": ["a2a3"], "config": {{"device_count": 2}}, "params": {{}}}}]
    RTOL = 0.0
    ATOL = 0.0

    def generate_args(self, params):
        specs = []
        for rank in range(2):
            specs += [TensorArg(f"in_{{rank}}", torch.arange(N, dtype=torch.float32) + 1000 * rank),
                      TensorArg(f"got_{{rank}}", torch.zeros(N)), TensorArg(f"out_{{rank}}", torch.zeros(N))]
        return TaskArgsBuilder(*specs)

    def compute_golden(self, args, params):
        for rank in range(2):
            getattr(args, f"got_{{rank}}").copy_(getattr(args, f"in_{{1 - rank}}"))
            getattr(args, f"out_{{rank}}").copy_(getattr(args, f"in_{{1 - rank}}") + {offset})
"""


def run_scene_test(tmp_path, offset, *options):
    path = tmp_path / "test_l3_scene.py"
    path.write_text(textwrap.dedent(SCENE_TEST.format(scene=SCENE, offset=offset)))
    return forked_pytest.pfsim_test(path, "-q", "-p", "no:cacheprovider", *options, cwd=tmp_path, timeout=300)


def test_a_level3_scene_test_runs_its_ranks_on_the_dies_of_one_simulation(tmp_path):
    run = run_scene_test(tmp_path, offset=1)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
    assert "TestFetch::test_run[peer]" in run.stdout and ", band " not in run.stdout  # the gain line, no band
    level2 = forked_pytest.pfsim_test(tmp_path / "test_l3_scene.py", "--level", "2", "-q", "--collect-only", "-p",
                                      "no:cacheprovider", cwd=tmp_path)
    assert "1 deselected" in level2.stdout, level2.stdout  # --level selects as simpler's does


PREFETCH_SCENE_TEST = """
import torch
import pytest
from simpler.task_interface import ArgDirection as D
from simpler.task_interface import TaskArgs, TensorArgType
from simpler_setup import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from simpler_setup.scene_test import _rehosted_ref_for

DEMO = {demo!r}


def orch_fn(orch, callables, task_args, config):
    args = TaskArgs()
    args.add_tensor(_rehosted_ref_for(task_args, task_args.src), TensorArgType.INPUT)
    args.add_tensor(_rehosted_ref_for(task_args, task_args.out), TensorArgType.OUTPUT_EXISTING)
    orch.submit_next_level(callables.demo, args, config, worker=0)


@pytest.mark.sdma
@scene_test(level=3, runtime="tensormap_and_ringbuffer")
class TestPrefetchOnADie(SceneTestCase):
    CALLABLE = {{
        "orchestration": orch_fn,
        "callables": [{{
            "name": "demo",
            "orchestration": {{"source": DEMO + "/orchestration/prefetch_demo_orch.cpp",
                              "function_name": "prefetch_demo_orchestration",
                              "config_name": "prefetch_demo_config", "signature": [D.IN, D.OUT]}},
            "incores": [{{"func_id": 0, "source": DEMO + "/aiv/kernel_prefetch_copy.cpp", "core_type": "aiv"}}],
        }}],
    }}
    CASES = [{{"name": "demo", "platforms": ["a2a3"], "config": {{"device_count": 1}}, "params": {{}}}}]
    RTOL = 0.0
    ATOL = 0.0

    def generate_args(self, params):
        return TaskArgsBuilder(TensorArg("src", torch.arange(128, dtype=torch.float32) / 8.0),
                               TensorArg("out", torch.full((128,), -1.0)))

    def compute_golden(self, args, params):
        args.out[:] = args.src
"""


def test_a_level3_cases_gain_gets_the_band_check_uncertainty_gives_the_same_case(tmp_path):
    """The shipped prefetch_demo's chip callable as a level-3 chip task: its pair again at each end
    of the doorbell's range gives the band `pfsim check prefetch_demo --uncertainty` gives."""
    path = tmp_path / "test_l3_prefetch.py"
    path.write_text(textwrap.dedent(PREFETCH_SCENE_TEST.format(
        demo=os.path.normpath(os.path.join(HERE, "..", "..", "cases", "prefetch_demo", "kernels")))))
    test = [path, "-q", "-p", "no:cacheprovider"]
    run = forked_pytest.pfsim_test(*test, "--pfsim-uncertainty=sdma.doorbell_latency", "--junitxml",
                                   tmp_path / "j.xml", cwd=tmp_path, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "j.xml").iter("property")}
    low, gain, high = (float(props[k]) for k in ("pfsim_gain_low_pct", "pfsim_gain_pct", "pfsim_gain_high_pct"))
    assert low < gain < high, props
    assert props["pfsim_gain_most_sensitive"] == "sdma.doorbell_latency" and props["pfsim_ranks"] == "1", props
    assert re.search(r"TestPrefetchOnADie::test_run\[demo\]: .*, band -[\d.]+\.\.-[\d.]+ % "
                     r"\(moved most by sdma\.doorbell_latency; sign holds\)", run.stdout), run.stdout
    check = json.loads(subprocess.run([pfsim.find_binary(), "check", "prefetch_demo", "--uncertainty", "--vary",
                                       "sdma.doorbell_latency", "--json"], capture_output=True, text=True,
                                      timeout=300).stdout)["cases"][0]
    assert (round(check["low_pct"], 3), round(check["high_pct"], 3)) == (low, high), (check, props)
    # the negative control: a key without a range fails the case, naming it (without the option,
    # no band: the test above)
    unranged = forked_pytest.pfsim_test(*test, "--pfsim-uncertainty=l2.size", cwd=tmp_path, timeout=300)
    assert unranged.returncode == 1, unranged.stdout + unranged.stderr
    assert "--pfsim-uncertainty: 'l2.size' has no range in the configuration" in unranged.stdout, unranged.stdout


def test_a_level3_scene_test_with_a_wrong_golden_fails_naming_the_tensor(tmp_path):
    """The negative control of the one above: the golden says + 2."""
    run = run_scene_test(tmp_path, offset=2)
    assert run.returncode == 1, run.stdout + run.stderr
    assert "TestFetch::peer (prefetch off): output 'out_0' differs from the golden" in run.stdout



RACE_SCENE_TEST = """
import torch
import pytest
from simpler.task_interface import ArgDirection as D
from simpler.task_interface import TaskArgs, TensorArgType
from simpler_setup import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
from simpler_setup.scene_test import _rehosted_ref_for

RACE = {race!r}


def orch_fn(orch, callables, task_args, config):
    args = TaskArgs()
    args.add_tensor(_rehosted_ref_for(task_args, task_args.src), TensorArgType.INPUT)
    args.add_tensor(_rehosted_ref_for(task_args, task_args.out), TensorArgType.OUTPUT_EXISTING)
    orch.submit_next_level(callables.race, args, config, worker=0)


@pytest.mark.sdma
@scene_test(level=3, runtime="tensormap_and_ringbuffer")
class TestRaceOnADie(SceneTestCase):
    ATOL = 1  # out[1] is 0 or 1 depending on the race: both within tolerance of the golden
    CALLABLE = {{
        "orchestration": orch_fn,
        "callables": [{{
            "name": "race",
            "orchestration": {{"source": RACE + "/orchestration/race_orch.cpp", "signature": [D.IN, D.OUT]}},
            "incores": [{{"func_id": 0, "source": RACE + "/aiv/kernel_race.cpp", "core_type": "aiv"}}],
        }}],
    }}
    CASES = [{{"name": "race", "platforms": ["a2a3"], "config": {{"device_count": 1}}, "params": {{}}}}]

    def generate_args(self, params):
        return TaskArgsBuilder(TensorArg("src", torch.ones(64)), TensorArg("out", torch.zeros(64)))

    def compute_golden(self, args, params):
        args.out[0] = 1.0
"""


def test_a_level3_result_that_depends_on_timing_fails_by_the_devices_verdict(tmp_path):
    """The level-2 race scene (tests/python/scenes/race) as a level-3 chip task: within tolerance
    of its golden both times, its off and on runs differ, and the device's judge says so, naming
    the tensor (the positive: every level-3 scene test above passes the same judge)."""
    path = tmp_path / "test_l3_race.py"
    path.write_text(textwrap.dedent(RACE_SCENE_TEST.format(
        race=os.path.join(HERE, "scenes", "race", "kernels"))))
    run = forked_pytest.pfsim_test(path, "-q", "-p", "no:cacheprovider", cwd=tmp_path, timeout=300)
    assert run.returncode == 1, run.stdout + run.stderr
    assert ("TestRaceOnADie::race: output wave0.rank0.out differs between prefetch off and on (the prefetch "
            "changed a value, or the result depends on timing)") in run.stdout, run.stdout


def test_the_devices_judge_gives_a_level3_pairs_verdict(pair):
    """L3Worker.judge: the device's verdict on two runs' waves (pfsim check's judge): the time is
    each wave's longest call, summed; a tensor that differs in one call is named by wave and rank."""
    worker, handles = pair
    fetched = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    result = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    result[1].name = "result"
    data = [input_of(0), input_of(1)]
    runs = {}
    for prefetch in (False, True):
        worker.prefetch = prefetch
        runs[prefetch] = run_scene(worker, handles["fetch_orchestration"], lambda r: (fetched[r], result[r]),
                                   window_data=data)
    worker.prefetch = True
    off, on = runs[False], runs[True]
    assert [n["name"] for n in on[0].results[1][1].summary["outputs"]] == ["arg0", "result"]  # named where named
    v = worker.judge(off, on)
    assert v["equivalent"] and v["failure"] == "", v
    assert v["time_off_ns"] == max(res.time_ns for _, res in off[0].results) > 0
    assert v["time_on_ns"] == max(res.time_ns for _, res in on[0].results)
    assert not worker.judge(off, on, (v["gain_pct"] + 1, 1e9))["gain_met"]  # the expectation's control
    # The control: one tensor of one call changed (an injected difference).
    changed = copy.deepcopy(on)
    changed[0].results[1][1].summary["outputs"][1]["sha256"] = "0" * 64
    bad = worker.judge(off, changed)
    assert not bad["equivalent"]
    assert bad["failure"] == "output wave0.rank1.result differs between prefetch off and on", bad
    fewer = [pfsim.level3.WaveResult(on[0].results[:1])]
    assert worker.judge(off, fewer)["failure"] == "the runs produced different outputs"
    # The host's tensors after the run are judged too: the same bytes pass, other bytes fail by name.
    host = L3Worker.host_hashes({"result": result[0]})
    assert worker.judge(off, on, host=(host, host))["equivalent"]
    other = [{"name": "result", "sha256": "0" * 64}]
    assert worker.judge(off, on, host=(host, other))["failure"] == \
        "output host.result differs between prefetch off and on"


class _Devices:
    """What the Orchestrator asks of its worker while it records (no device: nothing runs)."""
    device_count = 2
    num_sub_workers = 1


def test_the_graph_orders_tasks_by_their_tensors_tags(tmp_path):
    from pfsim.level3 import HostBuffer, Orchestrator, SubHandle

    f, g = (HostBuffer(str(tmp_path / n), 8192, i) for i, n in enumerate(("f", "g")))
    chip = pfsim.Handle(0, None)
    orch = Orchestrator(_Devices())

    def task(worker, *tensors):
        args = TaskArgs()
        for buffer, tag, offset in tensors:
            args.add_tensor(buffer.tensor((1024,), F32, offset), tag)
        orch.submit_next_level(chip, args, worker=worker)

    task(0, (f, TensorArgType.OUTPUT_EXISTING, 0))            # 0 writes f[0:4096)
    task(1, (f, TensorArgType.INPUT, 4096))                   # 1 reads f[4096:): no overlap, no dependency
    task(1, (f, TensorArgType.INPUT, 0))                      # 2 reads what 0 wrote
    task(0, (f, TensorArgType.INOUT, 0))                      # 3 after the writer and the reader since
    task(1, (g, TensorArgType.NO_DEP, 0), (f, TensorArgType.NO_DEP, 0))  # 4 orders nothing
    check = TaskArgs()
    check.add_tensor(f.tensor((1024,), F32), TensorArgType.INPUT)
    orch.submit_sub(SubHandle(0, print), check)               # 5 reads what 3 wrote
    assert [sorted(n.deps) for n in orch._nodes] == [[], [], [0], [0, 2], [], [3]]
    for b in (f, g):
        b.close()


def test_a_class_overriding_simplers_own_run_hook_is_refused(tmp_path):
    """What such an override checks would not run on pfsim: refused at import, by name."""
    path = tmp_path / "test_hook.py"
    path.write_text(textwrap.dedent("""
        from simpler_setup import SceneTestCase, scene_test

        @scene_test(level=3, runtime="tensormap_and_ringbuffer")
        class TestHook(SceneTestCase):
            CALLABLE = {"callables": []}
            CASES = [{"name": "c", "platforms": ["a2a3"], "config": {"device_count": 2}}]

            def _run_and_validate_l3(self, *args, **kwargs):
                raise AssertionError("never")
    """))
    run = forked_pytest.pfsim_test(path, "-q", "-p", "no:cacheprovider", cwd=tmp_path, timeout=120)
    assert run.returncode != 0
    assert "TestHook overrides _run_and_validate_l3, a method of simpler's own harness" in run.stdout


def test_simplers_worker_class_checks_a_prewarm_config_and_refuses_what_it_does_not_model(capfd):
    from pfsim.simpler_worker import Worker
    from pfsim.task_interface import CallConfig

    config = CallConfig()
    config.runtime_env.ring_task_window = 64
    worker = Worker(level=2, device_id=0, platform="a2a3sim", runtime="tensormap_and_ringbuffer")
    worker.init(prewarm_config=config)
    try:
        assert worker.pid  # a die's device process runs
    finally:
        worker.close()
    assert "Worker.init(prewarm_config): checked" in capfd.readouterr().err
    config.runtime_env.ring_task_window = 48  # the negative control: not a power of 2
    with pytest.raises(ValueError, match="ring_task_window = 48: each ring's value must be a power of 2"):
        Worker(level=2).init(prewarm_config=config)
    with pytest.raises(ValueError, match="a network of nodes is not modelled"):
        Worker(level=4)
    with pytest.raises(TypeError, match="option 'remote' of simpler's Worker is not modelled"):
        Worker(level=3, remote=True)


def test_the_device_of_several_dies_names_bad_requests(pair):
    worker, handles = pair
    ranks = worker._ranks
    with pytest.raises(ValueError, match="alloc: rank 5 is not one of the 2 ranks of this device"):
        ranks.alloc(5, 64)
    gm, _ = ranks.alloc(1, 64)
    with pytest.raises(ValueError, match=f"read: 1048576 bytes at GM {gm} of rank 1 are not allocated there"):
        ranks.read(1, gm, 1 << 20)  # beyond the allocation (rounded up to GM's alignment)
    ranks.write(1, gm, bytes(range(64)))
    assert ranks.read(1, gm, 64) == bytes(range(64))  # the control
    ranks.free(1, gm)
    call = {"rank": 0, "handle": handles["fetch_orchestration"].id, "tensors": [], "scalars": []}
    with pytest.raises(ValueError, match="run_ranks: rank 0 has two calls in one run"):
        ranks.run_ranks([call, call])
    with pytest.raises(ValueError, match="'trace' names one file for several dies: give each call its own"):
        ranks._request({"op": "run_ranks", "calls": [call], "trace": "x.json"})
    with pytest.raises(ValueError, match="'sanitize' is not modelled on several dies yet"):
        ranks._request({"op": "run_ranks", "calls": [call], "sanitize": True})
    # A file tensor whose pages lie beyond its file names the rank and the tensor; the GM
    # mapped for the call's tensors before it is given back (the next allocation is where
    # the freed one was; the control: the same tensor at offset 0 maps).
    page = worker.create_buffer(4096)
    t = {"dtype": "float32", "shape": [1024], "bytes": 4096, "file": page.path}
    beyond = dict(call, rank=1, tensors=[dict(t, offset=0), dict(t, offset=4096)])
    with pytest.raises(ValueError, match=r"rank 1 tensor 1: 4096 bytes \(its 4096 rounded up to pages\) at offset "
                                         r"4096 lie beyond /proc/\d+/fd/\d+ \(4096 bytes\)"):
        ranks.run_ranks([beyond])
    assert ranks.alloc(1, 64)[0] == gm
    ranks.free(1, gm)
    with pytest.raises(ValueError, match=r"expects 3 arguments; the case gives 1 \(1 tensors"):  # mapped: the next check
        ranks.run_ranks([dict(beyond, tensors=[dict(t, offset=0)])])
    with pytest.raises(ValueError, match="device_count=0: pfsim simulates 1 to 64 dies"):
        L3Worker(device_count=0)


@pytest.mark.parametrize("request_, message", [
    ({"op": "alloc", "rank": "0", "bytes": 64}, "rank: expected an integer of 32 bits without sign, got a string"),
    ({"op": "alloc", "rank": 0, "bytes": 64, "window": 1}, "window: expected a boolean, got a number"),
    ({"op": "free", "rank": 0}, "gm: missing"),
    ({"op": "read", "rank": 0, "gm": 4096, "bytes": 64, "file": 5, "offset": 0}, "file: expected a string, got a number"),
    ({"op": "run_ranks", "calls": {}}, "calls: expected an array, got an object"),
    ({"op": "run_ranks", "calls": [{"rank": 0, "handle": 0, "tensors": [], "scalars": [-1]}]},
     "calls[0].scalars[0]: expected an integer of 64 bits without sign, got -1"),
    ({"op": "run_ranks", "calls": [{"rank": 0, "handle": 0, "tensors": [{"dtype": "float32", "shape": [1],
                                                                         "bytes": 4, "gm": "x"}]}]},
     "calls[0].tensors[0].gm: expected an integer of 64 bits without sign, got a string"),
    ({"op": "run_ranks", "calls": [], "prefetch": "on"}, "prefetch: expected a boolean, got a string"),
], ids=["alloc.rank", "alloc.window", "free.gm", "read.file", "run_ranks.calls", "calls.scalars", "tensors.gm",
        "run_ranks.prefetch"])
def test_the_device_of_several_dies_names_a_mistyped_field_by_its_path(pair, request_, message):
    """As the one-die device (test_worker's test of every field): the field's path in the request,
    in one wording; the control: the device serves on (an allocation, written and read back)."""
    worker, _ = pair
    ranks = worker._ranks
    with pytest.raises(ValueError) as mistyped:
        ranks._request(request_)
    assert str(mistyped.value) == f"request.{message}"
    gm, _ = ranks.alloc(1, 64)
    ranks.write(1, gm, bytes(range(64)))
    assert ranks.read(1, gm, 64) == bytes(range(64))
    ranks.free(1, gm)


def test_a_tasks_ring_sizes_reach_its_die(pair):
    """A chip task's config.runtime_env sizes its graph's rings: a task window of 4 holds
    the fetch's two tasks; one of 2 (below what simpler takes, sent as is to the device)
    cannot, and the run says so naming the setting."""
    from pfsim.task_interface import CallConfig

    worker, handles = pair
    fetched = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    result = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
    config = CallConfig()
    config.runtime_env.ring_task_window = 4

    def orch_fn(orch, _a, cfg):
        with orch.allocate_domain(name="r", workers=[0, 1], window_size=WINDOW) as d:
            for rank in (0, 1):
                args = TaskArgs()
                args.add_tensor(fetched[rank].tensor((ELEMS,), F32), TensorArgType.OUTPUT_EXISTING)
                args.add_tensor(result[rank].tensor((ELEMS,), F32), TensorArgType.OUTPUT_EXISTING)
                args.add_scalar(d[rank].device_ctx)
                orch.submit_next_level(handles["fetch_orchestration"], args, cfg, worker=rank)
    worker.run(orch_fn, config=config)
    calls = []
    original = worker._ranks.run_ranks
    worker._ranks.run_ranks = lambda c, **k: calls.extend(c) or original(
        [dict(x, ring_task_window=[2] * 4) for x in c], **k)
    try:
        with pytest.raises(ValueError, match=r"runtime_env.ring_task_window = 2\) can hold"):
            worker.run(orch_fn, config=config)
    finally:
        worker._ranks.run_ranks = original
    assert calls[0]["ring_task_window"] == [4] * 4  # what the config asked for


def test_a_level3_run_that_takes_long_says_so_on_stderr(capfd):
    """L3Worker(progress=S) as Worker(progress=S): the device names the ranks running; 0 is quiet."""
    for every, said in ((1e-4, True), (0, False)):
        with L3Worker(device_count=2, enable_sdma=True, progress=every) as worker:
            handle = worker.register(scene_callable())  # the exchange
            inputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
            outputs = [worker.create_buffer(ELEMS * 4) for _ in range(2)]
            run_scene(worker, handle, lambda r: (inputs[r], outputs[r]))
        err = capfd.readouterr().err
        assert ("pfsim device: ranks 0,1: still running, " in err) == said, err

if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))

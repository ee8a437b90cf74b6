"""simpler's diagnostics from the simulated device, under `pfsim test`: the
argument dump (--dump-args, CoreTaskArgs::dump), in simpler's formats under
outputs/CLASS_CASE_TIME/ (pfsim._diagnostics; docs/python.md#diagnostics)."""

import json
import os
import struct
import subprocess
import textwrap

import forked_pytest
import pytest

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "cases")

SCENE = """
import torch
from simpler.task_interface import ArgDirection as D
from simpler_setup import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestDump(SceneTestCase):
    RTOL = 0
    ATOL = 0
    CALLABLE = {
        "orchestration": {"source": "dump_orch.cpp", "signature": [D.IN, D.IN, D.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_add.cpp", "core_type": "aiv"},
                    {"func_id": 1, "source": "kernels/aiv/kernel_scale.cpp", "core_type": "aiv"}],
    }
    CASES = [{"name": "small", "platforms": ["a2a3sim"], "params": {}}]

    def generate_args(self, params):
        n = 256
        return TaskArgsBuilder(TensorArg("a", torch.arange(n, dtype=torch.float32)),
                               TensorArg("b", torch.ones(n)), TensorArg("out", torch.zeros(n)))

    def compute_golden(self, args, params):
        args.out[:] = 2 * (args.a + args.b) + args.a
"""


def edited_orchestration(orch_edit=None):
    orch = open(os.path.join(HERE, "scenes", "args_dump", "dump_orch.cpp")).read()
    if orch_edit:
        assert orch_edit[0] in orch
        orch = orch.replace(*orch_edit)
    return orch


@pytest.fixture(scope="module")
def shared(shared):
    """conftest's shared kernels and, beside them, the scene's orchestration, for the scenes that do not
    edit it."""
    (shared / "dump_orch.cpp").write_text(edited_orchestration())
    return shared


def scene(folder, sources, orch_edit=None):
    """The scene test file in FOLDER (made), naming the sources in the folder SOURCES (`shared`) by their
    relative paths; with ORCH_EDIT, its orchestration so edited in FOLDER."""
    folder.mkdir(parents=True, exist_ok=True)
    prefix = os.path.relpath(sources, folder) + "/"
    text = textwrap.dedent(SCENE).replace('"source": "kernels/', '"source": "' + prefix + "kernels/")
    if orch_edit:
        (folder / "dump_orch.cpp").write_text(edited_orchestration(orch_edit))
    else:
        text = text.replace('"source": "dump_orch.cpp"', '"source": "' + prefix + 'dump_orch.cpp"')
    (folder / "test_dump.py").write_text(text)
    return folder / "test_dump.py"


def pfsim_test(folder, *args, env=None):
    r = forked_pytest.pfsim_test("test_dump.py", *args, "-p", "no:cacheprovider", "-rA", cwd=folder, env=env)
    return r.returncode, r.stdout + r.stderr


def manifests(folder):
    """The prefetch-on and -off runs' args_dump.json of the one case run, with args.bin's bytes."""
    (prefix,) = (folder / "outputs").glob("TestDump_small_*")
    out = {}
    for run, path in (("on", prefix / "args_dump"), ("off", prefix / "prefetch_off" / "args_dump")):
        data = json.loads((path / "args_dump.json").read_text())
        out[run] = (data, (path / data["bin_file"]).read_bytes() if data["bin_file"] else b"")
    return out


def floats(blob, entry):
    return struct.unpack(f"<{entry['bin_size'] // 4}f", blob[entry["bin_offset"]:entry["bin_offset"] + entry["bin_size"]])


N = 256
A = [float(i) for i in range(N)]
SUM = [a + 1 for a in A]
OUT = [2 * s + a for s, a in zip(SUM, A)]


def slots(data):
    return sorted((e["task_id"], e["arg_index"], e["kind"], e["stage"]) for e in data["args"])


def test_partial_dump_writes_only_the_marked_arguments_with_their_values(shared):
    folder = shared / "partial"
    scene(folder, shared)
    rc, out = pfsim_test(folder, "--dump-args", "1")
    assert rc == 0, out
    runs = manifests(folder)
    data, blob = runs["on"]
    assert data["dump_args_level"] == 1 and data["bin_file"] == "args.bin"
    # task ids are simpler's: ring (scope depth) << 32 | place in the ring
    assert slots(data) == [
        ("0x0000000000000000", 2, "tensor", "after_completion"),
        ("0x0000000100000000", 2, "scalar", "before_dispatch"),
        ("0x0000000100000001", 0, "tensor", "before_dispatch"),
        ("0x0000000100000001", 1, "tensor", "before_dispatch"),
        ("0x0000000100000001", 2, "tensor", "after_completion")]
    by = {(e["task_id"], e["arg_index"]): e for e in data["args"]}
    s = by[("0x0000000100000000", 2)]
    assert s["value"] == 2.0 and s["dtype"] == "FLOAT32" and s["bin_size"] == 0 and s["arg_index_ambiguous"]
    assert s["func_id"] == [1] and by[("0x0000000100000001", 0)]["func_id"] == [0]
    assert floats(blob, by[("0x0000000000000000", 2)]) == tuple(SUM)
    assert floats(blob, by[("0x0000000100000001", 0)]) == tuple(2 * x for x in SUM)
    assert floats(blob, by[("0x0000000100000001", 1)]) == tuple(A)
    assert floats(blob, by[("0x0000000100000001", 2)]) == tuple(OUT)
    assert by[("0x0000000100000001", 2)]["role"] == "output" and by[("0x0000000100000001", 0)]["role"] == "input"
    assert runs["off"][0]["args"] == data["args"]  # the prefetch-off run's dump, beside it


def test_full_and_hybrid_dump_every_argument_hybrid_with_bytes_of_the_marked_only(shared):
    folder = shared / "full"
    scene(folder, shared)
    rc, out = pfsim_test(folder, "--dump-args", "2")
    assert rc == 0, out
    data, _ = manifests(folder)["on"]
    # 3 tasks: 2 + 1 + 2 inputs before dispatch, 1 + 1 + 1 outputs after, the 2 scalars of task 1
    assert len(data["args"]) == 10 and all(e["bin_size"] > 0 for e in data["args"] if e["kind"] == "tensor")
    assert not any(e.get("arg_index_ambiguous") for e in data["args"])
    folder = shared / "hybrid"
    scene(folder, shared)
    rc, out = pfsim_test(folder, "--dump-args", "3")
    assert rc == 0, out
    data, _ = manifests(folder)["on"]
    assert len(data["args"]) == 10
    with_bytes = sorted((e["task_id"], e["arg_index"]) for e in data["args"] if e["bin_size"] > 0)
    assert with_bytes == [("0x0000000000000000", 2), ("0x0000000100000001", 0), ("0x0000000100000001", 1),
                          ("0x0000000100000001", 2)]


def test_marking_a_tensor_the_task_does_not_take_fails_the_run_naming_it(tmp_path, shared):
    bad, good = tmp_path / "bad", shared / "good"
    scene(bad, shared, ("last.dump();", "last.dump();\n        last.dump(b);"))
    rc, out = pfsim_test(bad, "--dump-args", "1")
    assert rc == 1, out
    assert "dump: a tensor that is not an argument of this task" in out and "dump_orch.cpp" in out, out
    # negative control: without --dump-args the marks cost nothing and nothing is written
    scene(good, shared)
    rc, out = pfsim_test(good, "-q")
    assert rc == 0 and not (good / "outputs").exists(), out


def test_a_dump_level_simpler_lacks_is_a_usage_error(tmp_path, shared):
    scene(tmp_path, shared)
    rc, out = pfsim_test(tmp_path, "--dump-args", "4", "--collect-only")
    assert rc == 4 and "pfsim: --dump-args 4: not a value pfsim writes (it writes 0, 1, 2, 3)" in out, out


def run_spmd_chain(spans, **settings):
    """vector_chain (3 tasks of 4 blocks) on a Worker (with configuration SETTINGS): its RunResult."""
    import torch

    callable_ = pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/vector_chain_orch.cpp", "signature": [1, 1, 2]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_add.cpp", "core_type": "aiv"},
                    {"func_id": 1, "source": "kernels/aiv/kernel_scale.cpp", "core_type": "aiv"}],
    }, os.path.join(CASES, "vector_chain"))
    with pfsim.Worker(set=settings) as worker:
        n = 4096
        return worker.run(worker.register(callable_), [torch.arange(n, dtype=torch.float32), torch.ones(n),
                                                        torch.zeros(n), 4], spans=spans)


def test_swimlane_records_hold_each_block_on_its_core_in_the_run_s_simulated_time():
    from pfsim import _diagnostics

    result = run_spmd_chain(spans=True)
    records = _diagnostics.swimlane_records(result, 2)
    assert records["chip_swimlane_level"] == 2 and records["metadata"]["clock_freq_hz"] == 10 ** 9
    assert records["metadata"]["core_types"] == ["aic"] * 24 + ["aiv"] * 48
    aicore, aicpu = records["aicore_tasks"], records["aicpu_tasks"]
    assert len(aicore) == len(aicpu) == 12  # 3 tasks x 4 blocks, one vector core each
    task_ids = sorted({row[1] for row in aicore})
    assert task_ids == [1 << 32, 2 << 32, (2 << 32) + 1]  # simpler's ids: ring 1 (outer scope), ring 2 (nested)
    dispatch = {(row[0], row[1]): row for row in aicpu}
    for task in result.tasks:
        rows = [row for row in aicore if row[1] == task.task_id]
        assert len(rows) == task.blocks == 4
        # the run's own summary: its cores, first start and last completion (ns, rounded)
        names = {row[0]: "die." + ("aic" if row[0] < 24 else "aiv") + str(row[0] - (0 if row[0] < 24 else 24))
                 for row in rows}
        assert sorted(names.values()) == sorted(task.cores)
        assert min(row[3] for row in rows) == _diagnostics.swimlane_cycles(task.start_ns)
        assert max(dispatch[(row[0], row[2])][3] for row in rows) == _diagnostics.swimlane_cycles(task.end_ns)
        for core, _, reg, start, end, _ in rows:
            d = dispatch[(core, reg)]
            assert d[2] < start < end <= d[3]
    # the tasks are a chain: each starts after the one it depends on completed
    ends = {t.task_id: t.end_ns for t in result.tasks}
    starts = sorted((min(r[3] for r in aicore if r[1] == tid), tid) for tid in task_ids)
    assert [tid for _, tid in starts] == task_ids and starts[1][0] >= ends[task_ids[0]]


def test_without_spans_a_run_has_none_to_write():
    # negative control of the records' source: spans are only gathered when asked for
    from pfsim import _diagnostics

    result = run_spmd_chain(spans=False)
    assert all(t.spans == [] for t in result.tasks)
    assert _diagnostics.swimlane_records(result, 1)["aicore_tasks"] == []


def test_swimlane_level_3_adds_the_scheduler_s_phases_one_record_per_act():
    from pfsim import _diagnostics

    result = run_spmd_chain(spans=True)
    records = _diagnostics.swimlane_records(result, 3)
    assert records["metadata"]["core_to_thread"] == [0] * 72  # one simulated scheduler serves every core
    (phases,) = records["aicpu_scheduler_phases"]
    spans = [s for t in result.tasks for s in t.spans]
    kinds = [p["kind"] for p in phases]
    # 3 tasks of 4 blocks: each task's blocks go out at one instant, and each block's completion is taken
    assert kinds.count("dispatch") == 3 and sum(p["pop_hit"] for p in phases if p["kind"] == "dispatch") == 3
    assert sum(p["tasks_processed"] for p in phases if p["kind"] == "complete") == len(spans) == 12
    assert all(p["pop_miss"] == 0 for p in phases if p["kind"] == "dispatch")
    assert [p["loop_iter"] for p in phases] == list(range(1, len(phases) + 1))
    for before, after in zip(phases, phases[1:]):  # one thread: in time order, never two at once
        assert before["start_cycles"] <= before["end_cycles"] <= after["start_cycles"], (before, after)
    starts = {p["start_cycles"] for p in phases if p["kind"] == "dispatch"}
    assert starts == {_diagnostics.swimlane_cycles(s["dispatch_ns"]) for s in spans}
    dispatch = [p for p in phases if p["kind"] == "dispatch"]
    assert all(p["end_cycles"] > p["start_cycles"] for p in dispatch)  # orch.dispatch_latency
    # negative control: level 2 has no scheduler records
    assert "aicpu_scheduler_phases" not in _diagnostics.swimlane_records(result, 2)
    assert "core_to_thread" not in _diagnostics.swimlane_records(result, 2)["metadata"]


def test_swimlane_level_4_adds_each_submission_on_the_orchestrator_s_simulated_clock():
    from pfsim import _diagnostics

    result = run_spmd_chain(spans=True, **{"orch.submit_cost": "200 ns"})
    records = _diagnostics.swimlane_records(result, 4)
    (submits,) = records["aicpu_orchestrator_phases"]
    # one record per submission, in order, with simpler's task ids
    assert [(r["submit_idx"], r["task_id"]) for r in submits] == [(i, t.task_id) for i, t in enumerate(result.tasks)]
    for r, task in zip(submits, result.tasks):
        # each takes orch.submit_cost; the task reaches the scheduler as it ends and is dispatched from then on
        assert r["end_cycles"] - r["start_cycles"] == 200, r
        assert r["end_cycles"] <= _diagnostics.swimlane_cycles(min(s["dispatch_ns"] for s in task.spans)), r
        assert [r["start_cycles"], r["end_cycles"]] == [_diagnostics.swimlane_cycles(x) for x in task.submit_ns]
    for before, after in zip(submits, submits[1:]):  # one orchestrator: one submission after another
        assert before["end_cycles"] <= after["start_cycles"], (before, after)
    assert "aicpu_scheduler_phases" in records  # level 4 holds level 3
    # negative controls: the durations are the configured cost, and level 3 has no orchestrator records
    slower = _diagnostics.swimlane_records(run_spmd_chain(spans=True, **{"orch.submit_cost": "700 ns"}), 4)
    assert {r["end_cycles"] - r["start_cycles"] for r in slower["aicpu_orchestrator_phases"][0]} == {700}
    assert "aicpu_orchestrator_phases" not in _diagnostics.swimlane_records(result, 3)


def simpler_read_perf_data(records):
    """simpler's own reading of the swimlane RECORDS file (its swimlane_converter's read_perf_data, from
    the simpler installed beside pfsim, in a process of its own); skips the test without one."""
    import sys

    from pfsim._simpler import real_locations

    roots = [os.path.dirname(p) for p in real_locations("simpler_setup")
             if os.path.isfile(os.path.join(p, "tools", "swimlane_converter.py"))]
    if not roots:
        pytest.skip("simpler's swimlane_converter is not installed beside pfsim (PYTHONPATH=SIMPLER_CHECKOUT)")
    code = ("import json, sys\nfrom simpler_setup.tools.swimlane_converter import read_perf_data\n"
            "print(json.dumps(read_perf_data(sys.argv[1])))")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([roots[0], os.path.join(roots[0], "python")]))
    done = subprocess.run([sys.executable, "-c", code, str(records)], env=env, capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1])


def test_simpler_s_converter_reads_level_4_with_the_run_s_task_and_submission_times(tmp_path, monkeypatch):
    from pfsim import _diagnostics

    result = run_spmd_chain(spans=True)
    path = tmp_path / "chip_swimlane_records.json"
    _diagnostics.write_swimlane(path, result, 4)
    data = simpler_read_perf_data(path)
    # simpler's times count µs from the earliest record: the first submission's start; the records hold
    # whole ns (SWIMLANE_CLOCK_HZ), so each time is the run's within half a ns
    origin_ns = result.tasks[0].submit_ns[0]

    def ns(us):
        return origin_ns + us * 1e3

    assert data["chip_swimlane_level"] == 4 and data["orchestrator_source"] == "aicpu"
    for task in result.tasks:
        rows = [t for t in data["tasks"] if t["task_id"] == task.task_id]
        assert len(rows) == task.blocks
        assert abs(ns(min(t["dispatch_time_us"] for t in rows)) - min(s["dispatch_ns"] for s in task.spans)) <= 0.5
        assert abs(ns(min(t["start_time_us"] for t in rows)) - task.start_ns) <= 0.5, (rows, task)
        assert abs(ns(max(t["finish_time_us"] for t in rows)) - task.end_ns) <= 0.5, (rows, task)
    (submits,) = data["aicpu_orchestrator_phases"]
    assert [(r["submit_idx"], r["task_id"], r["phase"]) for r in submits] == [
        (i, t.task_id, "orch_submit") for i, t in enumerate(result.tasks)]
    for r, task in zip(submits, result.tasks):
        assert [ns(r["start_time_us"]), ns(r["end_time_us"])] == pytest.approx(task.submit_ns, abs=0.5), (r, task)
    # negative control: counted from the die's first instant (0), the first submission's start would read
    # as no timestamp to simpler's converter, and its record would lose its duration
    monkeypatch.setattr(_diagnostics, "SWIMLANE_EPOCH_NS", 0)
    _diagnostics.write_swimlane(path, result, 4)
    first = simpler_read_perf_data(path)["aicpu_orchestrator_phases"][0][0]
    assert first["end_time_us"] - first["start_time_us"] != pytest.approx(
        (result.tasks[0].submit_ns[1] - result.tasks[0].submit_ns[0]) / 1e3), first


def test_enable_chip_swimlane_and_dep_gen_write_simpler_s_records_per_case_and_its_overhead_trace(tmp_path, shared):
    folder = shared / "swimlane"
    scene(folder, shared)
    # bare swimlane: level 4; --enable-swimlane-overhead: simpler's converter on each run's records and deps.json
    rc, out = pfsim_test(folder, "--enable-chip-swimlane", "--enable-dep-gen", "--enable-swimlane-overhead",
                         env=fake_simpler_converter(tmp_path / "site"))
    assert rc == 0, out
    assert "warning: --enable-chip-swimlane" not in out, out
    (prefix,) = (folder / "outputs").glob("TestDump_small_*")
    for path in (prefix, prefix / "prefetch_off"):
        data = json.loads((path / "chip_swimlane_records.json").read_text())
        assert data["chip_swimlane_level"] == 4 and len(data["aicore_tasks"]) == 3, data
        assert len(data["aicpu_orchestrator_phases"][0]) == 3, data
        assert sum(p.get("pop_hit", 0) for p in data["aicpu_scheduler_phases"][0]) == 3, data
        assert not (path / "args_dump").exists()
        deps = json.loads((path / "deps.json").read_text())
        assert [(e["source"], int(e["pred"]), int(e["succ"])) for e in deps["edges"]] == [
            ("creator", 0, 1 << 32), ("creator", 1 << 32, (1 << 32) + 1)], deps
        assert {row[1] for row in data["aicore_tasks"]} == {int(t["task_id"]) for t in deps["tasks"]}
        merged = json.loads((path / "merged_swimlane.json").read_text())
        assert merged == {"argv": ["--overhead"], "level": 4, "deps_beside": True}, merged
    rc, out = pfsim_test(folder, "--enable-chip-swimlane", "5", "--collect-only")
    assert rc == 4 and "pfsim: --enable-chip-swimlane 5: not a value pfsim writes (it writes 0, 1, 2, 3, 4)" in out, out


# A stand-in for simpler's swimlane_converter, written fresh (in a simpler installation at SITE): what
# it was given, beside the records.
FAKE_CONVERTER = """
import json, sys
from pathlib import Path

records = Path(sys.argv[1])
level = json.loads(records.read_text())["chip_swimlane_level"]
(records.parent / "merged_swimlane.json").write_text(json.dumps(
    {"argv": sys.argv[2:], "level": level, "deps_beside": (records.parent / "deps.json").exists()}))
"""


def fake_simpler_converter(site):
    for rel, text in (("simpler_setup/__init__.py", ""), ("simpler_setup/tools/__init__.py", ""),
                      ("simpler_setup/tools/swimlane_converter.py", FAKE_CONVERTER)):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    return dict(os.environ, PYTHONPATH=str(site))


def test_enable_scope_stats_writes_each_scope_s_ring_state_as_it_begins_and_ends(shared):
    folder = shared / "scope_stats"
    scene(folder, shared)
    rc, out = pfsim_test(folder, "--enable-scope-stats")
    assert rc == 0, out
    (prefix,) = (folder / "outputs").glob("TestDump_small_*")
    lines = (prefix / "scope_stats" / "scope_stats.jsonl").read_text().splitlines()
    meta, records = json.loads(lines[0]), [json.loads(line) for line in lines[1:]]
    assert meta["version"] == 6 and meta["fatal"] is False and meta["total"] == 4, meta
    assert meta["task_window_max"] == [16384] * 4 and meta["dep_pool_max"] == [16384] * 4, meta
    line = 1 + open(os.path.join(HERE, "scenes", "args_dump", "dump_orch.cpp")).read().splitlines().index(
        "    PTO2_SCOPE() {")
    # the executor's scope around the orchestration (ring 0), and its PTO2_SCOPE (ring 1)
    assert [(r["site"], r["phase"], r["depth"], r["ring"]) for r in records] == [
        ("executor:0", "begin", 0, 0), (f"dump_orch.cpp:{line}", "begin", 1, 1),
        (f"dump_orch.cpp:{line}", "end", 1, 1), ("executor:0", "end", 0, 0)]
    inner_end, outer_end = records[2], records[3]
    # ring 1 took tasks 1 and 2 and one allocated output (256 floats), given back as the scope ended;
    # task 2's existing output `out` is the TensorMap's one producer
    assert (inner_end["task_window_end"], inner_end["heap_end"], inner_end["heap_start"], inner_end["tensormap"]) == \
        (2, 1024, 1024, 1), inner_end
    # ring 0 took task 0 and its output, still held by the executor's scope
    assert (outer_end["task_window_end"], outer_end["heap_end"], outer_end["heap_start"]) == (1, 1024, 0), outer_end
    assert (prefix / "prefetch_off" / "scope_stats" / "scope_stats.jsonl").exists()


def test_enable_pmu_writes_each_block_s_cycles_and_its_pipes_busy_cycles(shared):
    folder = shared / "pmu"
    scene(folder, shared)
    rc, out = pfsim_test(folder, "--enable-pmu")  # bare: simpler's PIPE_UTILIZATION, 2
    assert rc == 0, out
    (prefix,) = (folder / "outputs").glob("TestDump_small_*")
    rows = (prefix / "pmu.csv").read_text().splitlines()
    header = rows[0].split(",")
    assert header == ["thread_id", "core_id", "task_id", "func_id", "core_type", "pmu_total_cycles", "vec_busy_cycles",
                      "cube_busy_cycles", "scalar_busy_cycles", "mte2_busy_cycles", "mte3_busy_cycles", "event_type"]
    data = [dict(zip(header, r.split(","))) for r in rows[1:]]
    assert [(d["task_id"], d["func_id"], d["core_type"]) for d in data] == [
        ("0x0000000000000000", "0", "1"), ("0x0000000100000000", "1", "1"), ("0x0000000100000001", "0", "1")]
    for d in data:
        total, busy = int(d["pmu_total_cycles"]), [int(d[c]) for c in header[6:11]]
        # vector kernels: the vector pipe and the loads and stores were busy, the cube not; none longer than the block
        assert total > 0 and busy[0] > 0 and busy[1] == 0 and busy[3] > 0 and busy[4] > 0, d
        assert max(busy) <= total and d["event_type"] == "2", d
    # the group's counters pfsim has no counterpart of are named, once
    assert out.count("pfsim: warning: --enable-pmu 2 (PIPE_UTILIZATION): pmu.csv has no mte1_busy_cycles") == 1, out


@pytest.mark.parametrize("group, name, counter", [
    (1, "ARITHMETIC_UTILIZATION", "vec_fp32_exec"), (4, "MEMORY", "l2_read_req"), (5, "MEMORY_L0", "l0a_read_req"),
    (6, "RESOURCE_CONFLICT", "bank_stall_cycles"), (7, "MEMORY_UB", "ub_read_bw_vector"),
    (8, "L2_CACHE", "r0_read_cache_hit")])
def test_a_pmu_group_pfsim_has_no_counter_of_is_refused_naming_the_group_and_its_counters(group, name, counter):
    from pfsim import _diagnostics

    why = _diagnostics.pmu_refusal(group)
    assert why.startswith(f"pfsim: --enable-pmu {group} ({name}): pfsim has none of its counters ("), why
    assert counter in why and why.endswith("; it writes 2 (PIPE_UTILIZATION)"), why


def test_enable_pmu_of_a_group_pfsim_does_not_write_is_a_usage_error(tmp_path, shared):
    scene(tmp_path, shared)
    rc, out = pfsim_test(tmp_path, "--enable-pmu", "4", "--collect-only", "-q")
    assert rc == 4 and "pfsim: --enable-pmu 4 (MEMORY): pfsim has none of its counters (ub_read_req, " in out, out


def test_a_pmu_group_simpler_lacks_is_a_usage_error_and_group_2_collects():
    from pfsim import _diagnostics

    assert _diagnostics.pmu_refusal(3) == "pfsim: --enable-pmu 3: not an a2a3 event group (simpler's are 1, 2, 4, 5, " \
                                          "6, 7, 8)"
    # negative controls: the group pfsim writes, and 0 (off), are not refused
    assert _diagnostics.pmu_refusal(2) is None and _diagnostics.pmu_refusal(0) is None


def run_dep_orch(tmp_path, manual_out=False, rewrite=False):
    """tests/python/scenes/dep_gen/dep_orch.cpp on a Worker with deps_json: (RunResult, deps.json)."""
    import torch

    orch = open(os.path.join(HERE, "scenes", "dep_gen", "dep_orch.cpp")).read()
    source = tmp_path / "dep_orch.cpp"
    source.write_text(("#define DEP_GEN_MANUAL_OUT\n" if manual_out else "") +
                      ("#define DEP_GEN_REWRITE\n" if rewrite else "") + orch)
    kernels = os.path.join(CASES, "vector_chain", "kernels", "aiv")
    callable_ = pfsim.Callable.from_dict({
        "orchestration": {"source": str(source), "signature": [1, 1, 2]},
        "incores": [{"func_id": 0, "source": os.path.join(kernels, "kernel_add.cpp"), "core_type": "aiv"},
                    {"func_id": 1, "source": os.path.join(kernels, "kernel_scale.cpp"), "core_type": "aiv"}],
    }, str(tmp_path))
    n = 256
    with pfsim.Worker() as worker:
        result = worker.run(worker.register(callable_), [torch.arange(n, dtype=torch.float32), torch.ones(n),
                                                          torch.zeros(n)], deps_json=tmp_path / "deps.json", spans=True)
    return result, json.loads((tmp_path / "deps.json").read_text())


def test_deps_json_records_each_dependency_with_its_source_and_slices(tmp_path):
    result, deps = run_dep_orch(tmp_path)
    assert result.error is None, result.error
    ids = [t.task_id for t in result.tasks]
    assert [t["task_id"] for t in deps["tasks"]] == [str(i) for i in ids]  # simpler's ids, quoted
    edges = [(int(e["pred"]), int(e["succ"]), e["source"], e["arg"], e["flags"], e.get("overlap")) for e in deps["edges"]]
    assert edges == [
        (ids[0], ids[1], "creator", 0, ["wait", "retain"], None),
        (ids[0], ids[2], "explicit", -1, ["wait", "retain"], None),  # set_dependencies: both, by default
        (ids[1], ids[2], "tensormap", 0, ["wait"], "covered"),
        (ids[1], ids[3], "tensormap", 0, ["wait"], "other")]
    # the edges are the dependencies the scheduler honoured
    index = {tid: i for i, tid in enumerate(ids)}
    for i, task in enumerate(result.tasks):
        assert sorted({index[int(e["pred"])] for e in deps["edges"] if int(e["succ"]) == ids[i]}) == task.deps
    tensors = {t["tensor_id"]: t for t in deps["tensors"]}
    half = deps["edges"][3]
    assert (half["consumer_shape"], half["consumer_start_offset"], half["consumer_strides"]) == ([128], "0", [1])
    assert (half["producer_shape"], half["producer_start_offset"]) == ([256], "0")
    assert tensors[half["tensor_id"]]["buffer_numel"] == "256" and tensors[half["tensor_id"]]["dtype"] == "FLOAT32"
    assert "tensor_id" not in deps["edges"][1]  # an explicit edge binds no tensor
    assert all(e["tensor_id"] in tensors for e in deps["edges"] if e["source"] != "explicit")
    assert [a["type"] for a in deps["tasks"][0]["args"]] == ["INPUT", "INPUT", "OUTPUT"]
    assert "tensor_id" not in deps["tasks"][0]["args"][2]  # an output has no tensor when submitted
    assert deps["tasks"][2]["kernel_ids"] == [-1, 1, -1] and deps["tasks"][2]["scope"] == "auto"


def test_deps_json_of_a_manual_dep_tensor_has_no_tensormap_edge(tmp_path):
    # negative control: with `out` manual_dep, tasks 2 and 3 do not look it up in the TensorMap
    result, deps = run_dep_orch(tmp_path, manual_out=True)
    assert [e["source"] for e in deps["edges"]] == ["creator", "explicit"]
    assert result.tasks[3].deps == []


def test_deps_json_of_an_output_rewritten_by_consecutive_tasks_has_an_edge_from_each_until_an_inout_covers_them(
        tmp_path):
    # pfsim's TensorMap keeps such writers as one entry (#49); each is still a producer of its own
    result, deps = run_dep_orch(tmp_path, rewrite=True)
    assert result.error is None, result.error
    ids = [t.task_id for t in result.tasks]
    edges = [(ids.index(int(e["pred"])), ids.index(int(e["succ"])), e["source"], e["arg"], e.get("overlap"))
             for e in deps["edges"]]
    assert edges == [(0, 3, "tensormap", 0, "covered"), (1, 3, "tensormap", 0, "covered"),
                     (2, 3, "tensormap", 0, "covered"), (0, 4, "tensormap", 2, "covered"),
                     (1, 4, "tensormap", 2, "covered"), (2, 4, "tensormap", 2, "covered"),
                     (4, 5, "tensormap", 0, "covered")]
    assert [t.deps for t in result.tasks] == [[], [], [], [0, 1, 2], [0, 1, 2], [4]]
    # negative control: the same scene with `out` manual_dep has no TensorMap edge at all
    result, deps = run_dep_orch(tmp_path, manual_out=True, rewrite=True)
    assert deps["edges"] == [] and all(t.deps == [] for t in result.tasks)


BUILD_CONFIG = """
    def _build_config(self, config_dict, *args, **kwargs):
        config = super()._build_config(config_dict, *args, **kwargs)
        self.seen = (config.enable_chip_swimlane, kwargs["output_prefix"])
        config.enable_chip_swimlane = OVERRIDE
        return config

    def compare_outputs(self, *args):
        import os
        super().compare_outputs(*args)
        level, prefix = self.seen
        assert os.path.exists(os.path.join(prefix, "chip_swimlane_records.json")), self.seen
        print("hook saw level", level, "in", os.path.basename(prefix))
"""


def test_a_class_s_own_build_config_sees_each_run_s_diagnostics_and_folder(shared):
    # simpler's dfx tests override _build_config to find their records, then check them in compare_outputs
    folder = shared / "build_config"
    path = scene(folder, shared)
    path.write_text(path.read_text() + BUILD_CONFIG.replace("OVERRIDE", "config.enable_chip_swimlane"))
    rc, out = pfsim_test(folder, "--enable-chip-swimlane", "3", "--enable-swimlane-overhead", "-s")
    assert rc == 0, out
    assert "hook saw level 3 in prefetch_off" in out and "hook saw level 3 in TestDump_small_" in out, out
    (prefix,) = (folder / "outputs").glob("TestDump_small_*")
    assert not (prefix / "deps.json").exists()  # negative control of --enable-dep-gen: none without it
    # negative control of --enable-swimlane-overhead: without simpler beside pfsim nothing is converted, and
    # without --enable-dep-gen its converter would have no deps.json: each said by name
    assert ("--enable-swimlane-overhead: merged_swimlane.json not written: simpler's "
            "simpler_setup.tools.swimlane_converter is not installed beside pfsim") in out, out
    assert "pfsim: warning: --enable-swimlane-overhead without --enable-dep-gen" in out, out
    assert not (prefix / "merged_swimlane.json").exists()
    # negative control: a hook that asks for other diagnostics than the options fails the case, naming it
    path.write_text(path.read_text().replace("config.enable_chip_swimlane = config.enable_chip_swimlane",
                                             "config.enable_chip_swimlane = 1"))
    rc, out = pfsim_test(folder, "--enable-chip-swimlane", "3")
    assert rc == 1 and "TestDump._build_config returns diagnostics (1, 0, 0, False, False)" in out, out


def test_a_call_config_asking_a_run_for_diagnostics_is_refused_naming_the_option_that_writes_them():
    from pfsim.task_interface import CallConfig

    config = CallConfig()
    assert config.refused() == []  # negative control: simpler's defaults
    config.enable_pmu = 2
    assert config.refused() == ["enable_pmu=2: pfsim writes it for scene tests from `pfsim test --enable-pmu`, not "
                                "from a run's CallConfig"]

"""pfsim.testing: scene tests as simpler writes them, run by `pfsim test`.

Each test writes a scene test beside a copy of a shipped case's sources and
runs it in its own pytest process, as a user would."""

import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import xml.etree.ElementTree as ET

import forked_pytest
import pytest

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "cases")

HEADER = """
import pytest
import torch
from pfsim.testing import ArgDirection as D
from pfsim.testing import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
"""

CHAIN = """
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestChain(SceneTestCase):
    RTOL = 0
    ATOL = 0
    CALLABLE = {
        "orchestration": {"source": "kernels/orchestration/vector_chain_orch.cpp", "signature": [D.IN, D.IN, D.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_add.cpp", "core_type": "aiv"},
                    {"func_id": 1, "source": "kernels/aiv/kernel_scale.cpp", "core_type": "aiv"}],
    }
    CASES = [
        {"name": "small", "platforms": ["a2a3sim"], "params": {"n": 4096}},
        {"name": "manual_one", "platforms": ["a2a3"], "manual": True, "params": {"n": 8192}},
        {"name": "board_only", "platforms": ["a5"], "params": {"n": 4096}},
    ]

    def generate_args(self, params):
        n = params["n"]
        return TaskArgsBuilder(TensorArg("a", torch.arange(n, dtype=torch.float32)),
                               TensorArg("b", torch.ones(n)), TensorArg("out", torch.zeros(n)), Scalar("blocks", 4))

    def compute_golden(self, args, params):
        args.out[:] = 2 * (args.a + args.b) + args.a
"""


def scene(folder, body, sources=None):
    """A scene test file in FOLDER (made) holding a copy of vector_chain's kernels, or naming the kernels in
    the folder SOURCES (`shared`) by their relative paths."""
    folder.mkdir(parents=True, exist_ok=True)
    body = textwrap.dedent(body)
    if sources is None:
        shutil.copytree(os.path.join(CASES, "vector_chain", "kernels"), folder / "kernels", dirs_exist_ok=True)
    else:
        body = body.replace('"source": "kernels/', f'"source": "{os.path.relpath(sources, folder)}/kernels/')
    path = folder / "test_scene.py"
    path.write_text(HEADER + body)
    return path


def pfsim_test(*args):
    r = forked_pytest.pfsim_test(*args, "-p", "no:cacheprovider", "-rA")
    return r.returncode, r.stdout + r.stderr


def test_cases_run_twice_and_report_their_gain_in_the_summary_and_the_junit_xml(tmp_path, shared):
    rc, out = pfsim_test(scene(shared / "run_twice", CHAIN, shared), "--junitxml", tmp_path / "j.xml")
    assert rc == 0, out
    assert re.search(r"TestChain::test_run\[small\]: [\d.]+ us -> [\d.]+ us, gain \+0\.0 %", out), out
    assert "1 passed, 2 skipped" in out
    assert "a manual case (run with --manual include)" in out
    assert "platforms ['a5'] include neither a2a3 nor a2a3sim" in out
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "j.xml").iter("property")}
    assert float(props["pfsim_time_off_ns"]) > 0 and float(props["pfsim_gain_pct"]) == 0.0


def test_the_harness_asks_the_device_for_task_records_only_where_a_diagnostic_reads_them(tmp_path, shared):
    """#49: a large graph's per-task records cost the device memory and time; a case's pair reads
    their count alone (pfsim_tasks) unless a swimlane or PMU option reads the spans. The control:
    with --enable-chip-swimlane the records are asked for and come back, as many as counted."""
    log = tmp_path / "runs.jsonl"
    spy = f"""
    import json
    import pfsim

    _request = pfsim.Worker._request

    def _logged(self, message, timeout=None):
        reply = _request(self, message, timeout)
        if message.get("op") == "run":
            summary = reply["result"]
            with open({str(log)!r}, "a") as f:
                f.write(json.dumps({{"asked": message.get("tasks", True), "listed": len(summary.get("tasks", [])),
                                    "count": summary.get("task_count")}}) + "\\n")
        return reply

    pfsim.Worker._request = _logged
    """
    path = scene(shared / "records", textwrap.dedent(spy) + CHAIN, shared)
    rc, out = pfsim_test(path, "--junitxml", tmp_path / "j.xml")
    assert rc == 0, out
    runs = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(runs) == 2 and all(not r["asked"] and r["listed"] == 0 and r["count"] > 1 for r in runs), runs
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "j.xml").iter("property")}
    assert int(props["pfsim_tasks"]) == runs[0]["count"], props
    log.unlink()
    r = forked_pytest.pfsim_test(path, "--enable-chip-swimlane", "-p", "no:cacheprovider", cwd=tmp_path)  # its outputs/
    assert r.returncode == 0, r.stdout + r.stderr
    listed = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(listed) == 2 and all(r["asked"] and r["listed"] == runs[0]["count"] for r in listed), listed


def test_manual_case_and_rounds_options(shared):
    path = scene(shared / "manual", CHAIN, shared)
    rc, out = pfsim_test(path, "--manual", "only")
    assert rc == 0 and "1 passed, 2 skipped" in out and "test_run[manual_one]" in out, out
    rc, out = pfsim_test(path, "--manual", "include", "--case", "TestChain::manual_one", "--rounds", "2")
    assert rc == 0 and "1 passed, 2 skipped" in out and "not selected by --case" in out, out
    rc, out = pfsim_test(path, "--case", "nothing")
    assert rc == 0 and "3 skipped" in out, out


def test_platform_a2a3sim_or_a2a3_selects_the_cases_and_tests_listed_for_it(shared):
    body = CHAIN + """
@pytest.mark.platforms(["a2a3"])
def test_on_the_board_only():
    pass
"""
    path = scene(shared / "platforms", body, shared)
    rc, out = pfsim_test(path, "--manual", "include")  # pfsim: a2a3's cases and tests too
    assert rc == 0 and "3 passed, 1 skipped" in out, out
    rc, out = pfsim_test(path, "--manual", "include", "--platform", "a2a3sim")
    assert rc == 0 and "1 passed, 3 skipped" in out and "test_run[small]" in out, out
    assert "platforms ['a2a3'] do not include a2a3sim (--platform a2a3sim runs what simpler runs on a2a3sim" in out
    rc, out = pfsim_test(path, "--manual", "include", "--platform", "a2a3")
    assert rc == 0 and "2 passed, 2 skipped" in out and "test_run[manual_one]" in out, out
    assert "platforms ['a2a3sim'] do not include a2a3" in out, out


def test_a_board_only_case_of_a_kernel_with_a_simulator_branch_is_warned_about(tmp_path):
    path = scene(tmp_path / "branch", CHAIN)
    kernel = tmp_path / "branch" / "kernels" / "aiv" / "kernel_add.cpp"
    kernel.write_text("#ifndef __CPU_SIM\n#endif\n" + kernel.read_text())
    warning = ("TestChain::manual_one: listed for a2a3 only, and kernel kernels/aiv/kernel_add.cpp has a __CPU_SIM "
               "branch: pfsim compiles that branch")
    rc, out = pfsim_test(path, "--manual", "include")
    assert rc == 0 and "2 passed" in out and out.count(warning) == 1, out
    assert "kernel_scale.cpp has" not in out and "TestChain::small: listed" not in out, out  # controls
    rc, out = pfsim_test(path, "--manual", "include", "--platform", "a2a3sim")
    assert rc == 0 and "has a __CPU_SIM branch" not in out, out


def test_a_prefetch_that_pays_off_is_reported_with_its_gain(tmp_path):
    rc, out = pfsim_test(os.path.join(CASES, "weight_warm", "test_weight_warm.py"), "--case", "fire_and_forget")
    assert rc == 0, out
    gain = float(re.search(r"test_run\[fire_and_forget\]: .* gain \+([\d.]+) %", out).group(1))
    assert 5 < gain < 40, out


def test_uncertainty_gives_a_cases_gain_its_band_as_check_uncertainty_does(tmp_path):
    warm = os.path.join(CASES, "weight_warm", "test_weight_warm.py")
    rc, out = pfsim_test(warm, "--case", "fire_and_forget", "--pfsim-uncertainty=sdma.doorbell_latency",
                         "--junitxml", tmp_path / "j.xml")
    assert rc == 0, out
    props = {p.get("name"): p.get("value") for p in ET.parse(tmp_path / "j.xml").iter("property")}
    low, gain, high = (float(props[k]) for k in ("pfsim_gain_low_pct", "pfsim_gain_pct", "pfsim_gain_high_pct"))
    assert low < gain < high, props  # the doorbell's latency moves the warm's cost
    assert props["pfsim_gain_most_sensitive"] == "sdma.doorbell_latency" and props["pfsim_gain_sign_holds"] == "True"
    assert re.search(r"test_run\[fire_and_forget\]: .* gain \+[\d.]+ %, .*, band \+[\d.]+\.\.\+[\d.]+ % "
                     r"\(moved most by sdma\.doorbell_latency; sign holds\)", out), out
    # the same band as the CLI's over the same key (the shipped case is this scene test's case)
    import json
    check = json.loads(subprocess.run([pfsim.find_binary(), "check", "weight_warm", "--uncertainty", "--vary",
                                       "sdma.doorbell_latency", "--json"], capture_output=True, text=True,
                                      timeout=600).stdout)["cases"]
    cli = next(c for c in check if c["name"] == "weight_warm")
    assert (round(cli["low_pct"], 3), round(cli["high_pct"], 3)) == (low, high), (cli, props)


def test_the_band_searches_the_combinations_from_each_keys_direction():
    from pfsim.testing import _CaseFailed, gain_band, uncertainty_keys
    ranges = {"a": ("1", "2"), "b": ("x", "y"), "c": ("5", "5")}
    gains = {(): 10.0, (("a", "1"),): 8.0, (("a", "2"),): 12.0, (("b", "x"),): 11.0, (("b", "y"),): 9.5,
             (("c", "5"),): 10.0, (("a", "1"), ("b", "y")): 6.0, (("a", "2"), ("b", "x")): 14.0}
    asked = []

    def gain_at(sets):
        asked.append(dict(sets))
        return gains[tuple(sorted(sets.items()))]

    band = gain_band(10.0, ranges, gain_at)
    assert (band["low_pct"], band["high_pct"], band["most_sensitive"], band["sign_holds"]) == (6.0, 14.0, "a", True)
    assert band["combined"]["lowest"] == {"sets": {"a": "1", "b": "y"}, "gain_pct": 6.0}
    assert {"a": "1", "b": "y"} in asked and {"a": "2", "b": "x"} in asked and len(asked) == 8
    # the negative controls: a combination that cannot be measured is named and leaves the one-key ends;
    # a gain nothing moves has no most sensitive key and runs no combination
    failing = gain_band(10.0, ranges, lambda sets: None if len(sets) == 2 else gains[tuple(sorted(sets.items()))])
    assert (failing["low_pct"], failing["high_pct"]) == (8.0, 12.0)
    assert failing["not_measured"] == ["the lowest combination", "the highest combination"]
    flat = gain_band(0.0, {"a": ("1", "2")}, lambda sets: 0.0)
    assert flat["most_sensitive"] == "" and flat["combined"]["lowest"] == {"sets": {}, "gain_pct": None}
    assert uncertainty_keys(None, ranges) is None and uncertainty_keys("", ranges) == ["a", "b"]
    with pytest.raises(_CaseFailed, match="--pfsim-uncertainty: 'l2.size' has no range in the configuration"):
        uncertainty_keys("b,l2.size", ranges)


def test_a_result_that_depends_on_timing_fails_the_off_on_identity(tmp_path):
    rc, out = pfsim_test(os.path.join(HERE, "scenes", "race", "scene_race.py"))
    assert rc == 1, out
    assert ("TestRace::race: output out differs between prefetch off and on (the prefetch changed a value, "
            "or the result depends on timing)") in out, out


def test_an_output_the_kernel_never_writes_fails_naming_the_tensor_and_the_largest_difference(shared):
    # `extra` is an output in the signature, but the orchestration never hands it to a task.
    body = (CHAIN.replace('"signature": [D.IN, D.IN, D.OUT]', '"signature": [D.IN, D.IN, D.OUT, D.OUT]')
            .replace('TensorArg("out", torch.zeros(n)),', 'TensorArg("out", torch.zeros(n)), TensorArg("extra", torch.zeros(n)),')
            .replace("args.out[:] = 2 * (args.a + args.b) + args.a", "args.out[:] = 2 * (args.a + args.b) + args.a\n"
                     "        args.extra[:] = 1"))
    rc, out = pfsim_test(scene(shared / "extra_output", body, shared))
    assert rc == 1, out
    assert ("TestChain::small (prefetch off): output 'extra' differs from the golden: largest difference 1 at element 0 "
            "(got 0, expected 1" in out), out


@pytest.mark.parametrize("edit, message", [
    (('"kernels/aiv/kernel_scale.cpp"', '"kernels/aiv/kernel_gone.cpp"'),
     r"TestChain::small: CALLABLE names a source that does not exist: .*kernels/aiv/kernel_gone\.cpp"),
    (('"params": {"n": 4096}', '"params": {"n": 4096, "unused": 3}'),
     r"TestChain::small: params \['unused'\] are not used by generate_args or compute_golden"),
    (('TensorArg("out", torch.zeros(n)), Scalar("blocks", 4)', 'Scalar("blocks", 4), TensorArg("out", torch.zeros(n))'),
     r"TestChain::small: generate_args raised ValueError: tensor 'out' comes after a scalar"),
    (('TensorArg("b", torch.ones(n))', 'TensorArg("b", torch.ones(n, dtype=torch.uint16))'),
     r"TestChain::small: generate_args raised AttributeError: .*uint16"),
    (('TensorArg("b", torch.ones(n))', 'TensorArg("b", torch.ones(n, dtype=torch.complex64))'),
     r"TestChain::small: tensor 'b': dtype torch.complex64 has no a2a3 DataType"),
    (('Scalar("blocks", 4)', 'Scalar("blocks", 4), Scalar("blocks", 5)'),
     r"generate_args raised ValueError: argument name 'blocks' repeats"),
])
def test_bad_scene_input_is_a_clear_failure_naming_the_case_and_the_cause(tmp_path, shared, edit, message):
    if "uint16" in edit[1] and hasattr(__import__("torch"), "uint16"):
        pytest.skip("this torch has uint16")
    rc, out = pfsim_test(scene(shared / tmp_path.name, CHAIN.replace(*edit), shared))
    assert rc == 1, out
    assert re.search(message, out), out


def test_a_compile_error_fails_the_case_with_the_compilers_output(tmp_path):
    path = scene(tmp_path, CHAIN)
    with open(tmp_path / "kernels" / "aiv" / "kernel_add.cpp", "a") as f:
        f.write("\nint broken = ;\n")
    rc, out = pfsim_test(path)
    assert rc == 1, out
    assert re.search(r"TestChain::small: a source does not compile:.*kernel_add\.cpp:\d+:\d+: error", out, re.S), out


def test_an_unknown_case_key_is_a_collection_error_naming_it(tmp_path):
    rc, out = pfsim_test(scene(tmp_path, CHAIN.replace('"params": {"n": 4096}}', '"params": {"n": 4096}, "parms": 1}')))
    assert rc != 0
    assert "TestChain: CASES[0]: unknown key 'parms'" in out, out


def test_the_standalone_form_runs_the_module(shared):
    path = scene(shared / "standalone", CHAIN + '\nif __name__ == "__main__":\n    SceneTestCase.run_module(__name__)\n',
                 shared)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(pfsim.__file__)))
    r = subprocess.run([sys.executable, str(path), "-p", "a2a3sim", "--case", "small"], capture_output=True, text=True,
                       env=env, timeout=600)
    assert r.returncode == 0 and "1 passed" in r.stdout, r.stdout + r.stderr


def _anonymous_kib(tensor) -> int:
    """The host's private copies (kB) in the mapping holding `tensor`'s first element (/proc/self/smaps)."""
    address, inside = tensor.data_ptr(), False
    with open("/proc/self/smaps") as f:
        for line in f:
            head = line.split()[0]
            if "-" in head and not head.endswith(":"):
                low, high = (int(x, 16) for x in head.split("-"))
                inside = low <= address < high
            elif inside and head == "Anonymous:":
                return int(line.split()[1])
    raise AssertionError("no mapping holds the tensor")


def test_the_goldens_clone_shares_the_arguments_memory_until_written_and_keeps_only_what_it_changed():
    import torch
    from pfsim.testing import Scalar, TaskArgsBuilder, TensorArg

    n = 1 << 20  # 4 MiB of float32: large enough to be mapped, not cloned
    args = TaskArgsBuilder(TensorArg("a", torch.arange(n, dtype=torch.float32)), TensorArg("b", torch.ones(n)),
                           TensorArg("out", torch.zeros(n)), TensorArg("small", torch.ones(4)), Scalar("k", 3))
    golden = args.copy_on_write_clone()
    assert float(golden.a.sum()) == float(args.a.sum()) == n * (n - 1) / 2  # both read: the same pages
    assert _anonymous_kib(golden.a) == 0 and _anonymous_kib(args.a) == 0
    golden.out[:] = 2 * golden.a + golden.b
    golden.a[0] = -1  # a golden writing an input in place: one page copied, the arguments unchanged
    assert _anonymous_kib(golden.a) == 4 and float(args.a[0]) == 0 and float(args.out.abs().sum()) == 0
    args.small[0] = 7  # the other way round too (a small tensor is a clone)
    assert float(golden.small[0]) == 1
    # the negative control: a plain clone is private memory from the start
    plain = args.clone()
    assert _anonymous_kib(plain.out) >= n * 4 // 1024
    # after compute_golden the golden keeps its own memory only for the tensors it wrote (b was only read;
    # a written back to its old value counts as written: known from its pages, without reading the arguments')
    golden.a[0] = 0
    golden.share_unchanged(args)
    assert golden.b.data_ptr() == args.b.data_ptr() and _anonymous_kib(args.b) == 0
    assert golden.a.data_ptr() != args.a.data_ptr() and torch.equal(golden.a, args.a)
    assert golden.out.data_ptr() != args.out.data_ptr() and torch.equal(golden.out, 2 * args.a + 1)
    assert golden.small.data_ptr() != args.small.data_ptr()  # 7 against 1: changed, kept


OWN_L2 = CHAIN + """
    def _run_and_validate_l2(self, worker, callable_obj, case, rounds=1, skip_golden=False, **diagnostics):
        from pfsim.testing import _build_chip_task_args, _compare_outputs
        chip = worker._chip_worker
        chip._register_callable_at_slot(3, callable_obj)
        for _ in range(rounds):
            args = self.generate_args(case["params"])
            golden = args.clone()
            self.compute_golden(golden, case["params"])
            chip_args, outputs = _build_chip_task_args(args, self.CALLABLE["orchestration"]["signature"])
            chip._run_slot(3, chip_args, config=self._build_config(case.get("config", {})))
            _compare_outputs(args, golden, outputs, self.RTOL, self.ATOL)
        chip._unregister_slot(3)
        assert VERDICT, f"own hook ran {rounds} rounds, {worker.aicpu_dlopen_count} loads, outputs {outputs}"
"""


def test_a_class_s_own_run_and_validate_l2_is_called_as_simpler_calls_it(shared):
    # As simpler's harness: on the class's st_worker, with build_callable's callable, the case, --rounds.
    # Once with prefetch off and once on, each on a die of its own: its runs judged pairwise.
    rc, out = pfsim_test(scene(shared / "own_l2_pass", OWN_L2.replace("VERDICT", "True"), shared), "--rounds", "2")
    assert rc == 0 and "1 passed, 2 skipped" in out, out
    assert re.search(r"test_run\[small\]: [\d.]+ us -> [\d.]+ us, gain [-+][\d.]+ %", out), out
    # Negative control of the pair: inputs that differ between its two calls match the golden on
    # each side, and the judge sees outputs that differ.
    shifted = OWN_L2.replace("VERDICT", "True").replace(
        'args = self.generate_args(case["params"])',
        'args = self.generate_args(case["params"]); args.a.add_(getattr(type(self), "side", 0))').replace(
        "chip._unregister_slot(3)", "chip._unregister_slot(3); type(self).side = 1")
    rc, out = pfsim_test(scene(shared / "own_l2_shifted", shifted, shared))
    assert rc == 1 and ("TestChain::small: run 1 of its own _run_and_validate_l2: output out differs between "
                        "prefetch off and on") in out, out
    # Negative control: its failure is the test's (it ran, on a worker that counted its prepare).
    rc, out = pfsim_test(scene(shared / "own_l2_fail", OWN_L2.replace("VERDICT", "False"), shared), "--rounds", "2")
    assert rc == 1 and "own hook ran 2 rounds, 1 loads, outputs ['out']" in out, out
    # Diagnostics its own runs would not write are refused by name.
    rc, out = pfsim_test(scene(shared / "own_l2_diag", OWN_L2.replace("VERDICT", "True"), shared),
                         "--enable-scope-stats")
    assert rc == 1 and "--enable-scope-stats is not written for a class's own _run_and_validate_l2" in out, out

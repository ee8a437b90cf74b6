"""simpler's scene tests with no edit: simpler's import names, its fixtures and
options, its own test methods, its CASES config, and a simpler installation
beside pfsim (pfsim._simpler, pfsim._harness).

Each test writes scene tests as simpler's tree has them (imports from
simpler_setup and simpler.task_interface) and runs them in their own pytest
process through `pfsim test`, as a user would."""

import os
import re
import shutil
import subprocess
import textwrap

import forked_pytest
import pytest

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "cases")

SIMPLER_HEADER = """
import torch
from simpler.task_interface import ArgDirection as D
from simpler_setup import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test
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
    CASES = [{"name": "small", "platforms": ["a2a3sim", "a2a3"], "params": {"n": 4096}}]

    def generate_args(self, params):
        n = params["n"]
        return TaskArgsBuilder(TensorArg("a", torch.arange(n, dtype=torch.float32)),
                               TensorArg("b", torch.ones(n)), TensorArg("out", torch.zeros(n)), Scalar("blocks", 4))

    def compute_golden(self, args, params):
        args.out[:] = 2 * (args.a + args.b) + args.a
"""


def scene(folder, body, name="test_scene.py", kernels=True, sources=None):
    """A scene test file (simpler's imports) in `folder`, beside a copy of vector_chain's kernels, or naming
    the kernels in the folder SOURCES (`shared`) by their relative paths."""
    os.makedirs(folder, exist_ok=True)
    body = textwrap.dedent(body)
    if sources is not None:
        body = body.replace('"source": "kernels/', f'"source": "{os.path.relpath(sources, folder)}/kernels/')
    elif kernels:
        shutil.copytree(os.path.join(CASES, "vector_chain", "kernels"), os.path.join(folder, "kernels"),
                        dirs_exist_ok=True)
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(SIMPLER_HEADER + body)
    return path


def pfsim_test(*args, cwd=None, env=None):
    r = forked_pytest.pfsim_test(*args, "-p", "no:cacheprovider", "-rA", cwd=cwd, env=env)
    return r.returncode, r.stdout + r.stderr


def fake_simpler(root):
    """A minimal simpler installation written fresh: its harness modules raise if
    run (pfsim's must be used), its golden module is what a test imports from it."""
    files = {
        "simpler_setup/__init__.py": "raise RuntimeError('the real simpler_setup/__init__.py ran')\n",
        "simpler_setup/scene_test.py": "raise RuntimeError('the real simpler_setup.scene_test ran')\n",
        "simpler_setup/goldens/__init__.py": "",
        "simpler_setup/goldens/doubling.py": ("from simpler_setup import TensorArg\n"
                                              "def golden(args):\n    args.out[:] = 2 * (args.a + args.b) + args.a\n"),
        "simpler/__init__.py": "raise RuntimeError('the real simpler/__init__.py ran')\n",
        "simpler/task_interface.py": "raise RuntimeError('the real simpler.task_interface ran')\n",
    }
    for rel, text in files.items():
        path = os.path.join(root, rel)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    return str(root)


OWN_TEST_RUN = CHAIN + """
    def test_run(self, st_platform, st_worker, request):
        super().test_run(st_platform, st_worker, request)
        ran = [c["name"] for c in self._matching_cases(st_platform, request)]
        assert ran == ["small"] and st_platform == "a2a3sim", (ran, st_platform)
        assert not self._effective_enable_dep_gen(request)  # simpler's dep_gen tests ask (not given here)
        print("own test_run checked", ran)

    def test_the_fixtures(self, st_platform, st_worker, st_device_ids):
        assert st_device_ids == [2, 3, 4] and st_platform == "a2a3sim"


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestOwnRaises(TestChain):
    def test_run(self, st_platform, st_worker, request):
        raise AssertionError("the class's own test_run ran and failed")
"""


def test_a_class_s_own_test_run_and_test_methods_run_with_simpler_s_imports_and_fixtures(shared):
    folder = shared / "own_test_run"
    rc, out = pfsim_test(scene(folder, OWN_TEST_RUN, sources=shared), "--device", "2-4", "-s", cwd=folder)
    assert rc == 1, out
    # super().test_run ran the case on the die (its gain line), then the override's own checks
    assert re.search(r"TestChain::test_run \(case small\): [\d.]+ us -> [\d.]+ us", out), out
    assert "own test_run checked ['small']" in out, out
    assert "PASSED test_scene.py::TestChain::test_the_fixtures" in out, out
    # negative control: an own test_run that fails is reported failed, not replaced
    assert "AssertionError: the class's own test_run ran and failed" in out, out
    assert "FAILED test_scene.py::TestOwnRaises::test_run" in out and "1 failed, 3 passed" in out, out
    assert "test_run[" not in out, out


def test_the_gain_summary_shows_every_case_an_own_test_run_runs(shared):
    body = CHAIN.replace('"params": {"n": 4096}}]', '"params": {"n": 4096}},\n'
                         '             {"name": "large", "platforms": ["a2a3sim"], "params": {"n": 8192}}]')
    body += """
    def test_run(self, st_platform, st_worker, request):
        super().test_run(st_platform, st_worker, request)
"""
    rc, out = pfsim_test(scene(shared / "gain_summary", body, sources=shared))
    assert rc == 0, out
    lines = re.findall(r"TestChain::test_run \(case (\w+)\): ([\d.]+) us -> ", out)
    # both cases, in order, each with its own time (the larger one takes longer)
    assert [name for name, _ in lines] == ["small", "large"], out
    assert float(lines[1][1]) > float(lines[0][1]), out


def test_without_an_own_test_run_each_case_is_its_own_test(tmp_path):
    path = scene(tmp_path, CHAIN.replace('"params": {"n": 4096}}]', '"params": {"n": 4096}},\n'
                                         '             {"name": "board", "platforms": ["a5"], "params": {}}]'))
    rc, out = pfsim_test(path, "--collect-only", "-q")
    assert rc == 0 and "TestChain::test_run[small]" in out and "TestChain::test_run[board]" in out, out


def test_simpler_s_own_modules_come_from_a_simpler_install_or_a_clear_message_says_which_is_missing(tmp_path, shared):
    body = CHAIN.replace("args.out[:] = 2 * (args.a + args.b) + args.a", "doubling.golden(args)")
    path = scene(shared / "goldens", "from simpler_setup.goldens import doubling\n" + body, sources=shared)
    rc, out = pfsim_test(path, "--collect-only", "-q")
    assert rc == 2, out
    assert ("No module named 'simpler_setup.goldens': pfsim provides simpler's scene-test harness" in out
            and "is simpler's own code, and no 'simpler_setup' package of a simpler installation is on sys.path" in out), out
    # With simpler installed (on PYTHONPATH here), its golden module is used, unchanged; its harness is not.
    env = dict(os.environ, PYTHONPATH=fake_simpler(tmp_path / "site"))
    rc, out = pfsim_test(path, env=env)
    assert rc == 0 and "1 passed" in out, out
    assert "real simpler" not in out, out


def test_simpler_s_own_harness_conftest_is_not_loaded_but_other_conftests_are(tmp_path):
    checkout = tmp_path / "simpler"
    for rel in ("simpler_setup/scene_test.py", "python/simpler/task_interface.py"):
        os.makedirs(os.path.dirname(checkout / rel), exist_ok=True)
        (checkout / rel).write_text("raise RuntimeError('simpler ran')\n")
    (checkout / "conftest.py").write_text("raise RuntimeError('simpler harness conftest ran')\n")
    path = scene(checkout / "examples" / "chain", CHAIN, kernels=False)
    rc, out = pfsim_test(path, "--collect-only", "-q", cwd=checkout)
    assert rc == 0 and "TestChain::test_run[small]" in out, out
    assert "conftest.py not loaded" not in out, out  # simpler ships that one: replaced as expected
    # a conftest.py simpler does not ship, inside the checkout: replaced too, and named even under -q
    (checkout / "examples" / "conftest.py").write_text("raise RuntimeError('user conftest ran')\n")
    rc, out = pfsim_test(path, "--collect-only", "-q", cwd=checkout)
    assert rc == 0 and "TestChain::test_run[small]" in out, out
    named = [line for line in out.splitlines() if "simpler does not ship this file" in line]
    assert len(named) == 1 and named[0].startswith(str(checkout / "examples" / "conftest.py")), out
    os.remove(checkout / "examples" / "conftest.py")
    # negative control: the same conftest.py outside a simpler checkout is loaded
    os.remove(checkout / "simpler_setup" / "scene_test.py")
    rc, out = pfsim_test(path, "--collect-only", "-q", cwd=checkout)
    assert rc != 0 and "simpler harness conftest ran" in out, out


REFUSED_CONFIGS = [
    ('{"runtime_env": {"ring_task_window": 48}}', "case small: config runtime_env.ring_task_window = 48: each "
                                                  "ring's value must be a power of 2"),
    ('{"runtime_env": {"ring_dep_pool": [256]}}', "case small: config runtime_env.ring_dep_pool must be an int "
                                                  "(every ring) or a list of 4 ints"),
    ('{"enable_pmu": 1}', "case small: unknown config key 'enable_pmu'"),
    ('{"runtime_env": {"ring_size": 1}}', "case small: unknown config.runtime_env key 'ring_size'"),
    ('{"device_count": 2}', "case small: config device_count=2 is not honoured"),
    ('{"aicpu_thread_num": 5}', "case small: config aicpu_thread_num = 5: simpler's a2a3 runs 1 to 4 AICPU threads"),
]


def test_a_cases_config_pfsim_cannot_honour_is_refused_by_name(tmp_path):
    # one module per config, collected in one session: each a collection error naming its key
    paths = [scene(tmp_path, CHAIN.replace('"params": {"n": 4096}}', f'"params": {{"n": 4096}}, "config": {config}}}'),
                   name=f"test_config{i}.py", kernels=i == 0) for i, (config, _) in enumerate(REFUSED_CONFIGS)]
    rc, out = pfsim_test(*paths, "--collect-only", "-q")
    assert rc == 2 and f"{len(REFUSED_CONFIGS)} errors" in out, out
    for _, message in REFUSED_CONFIGS:
        assert message in out, out


def test_a_config_at_its_default_is_honoured(tmp_path):
    # negative control of the refusals: simpler's defaults (0 = the runtime's own) are what pfsim runs
    body = CHAIN.replace('"params": {"n": 4096}}', '"params": {"n": 4096}, "config": {"aicpu_thread_num": 0, '
                                                   '"runtime_env": {"ring_heap": 0}, "device_count": 1}}')
    rc, out = pfsim_test(scene(tmp_path, body), "--collect-only", "-q")
    assert rc == 0 and "TestChain::test_run[small]" in out, out


def test_simpler_s_diagnostics_options_that_cannot_write_are_usage_errors(tmp_path):
    # as simpler's harness: the overhead tracks are drawn on the swimlane records
    rc, out = pfsim_test(scene(tmp_path, CHAIN), "--enable-swimlane-overhead", "--collect-only", "-q")
    assert rc == 4 and "pfsim: --enable-swimlane-overhead requires --enable-chip-swimlane" in out, out
    # negative control: given a value of 0 (simpler's "off"), they are off and the tests collect
    rc, out = pfsim_test(scene(tmp_path, CHAIN), "--enable-pmu=0", "--enable-chip-swimlane=0", "--dump-args=0",
                         "--collect-only", "-q")
    assert rc == 0 and "TestChain::test_run[small]" in out, out


@pytest.mark.parametrize("args, message", [
    (["--enable-chip-swimlanes"], "unrecognized arguments: --enable-chip-swimlanes"),
    (["--platform", "a5sim"], "pfsim: --platform a5sim: pfsim simulates an a2a3 die"),
    (["--level", "4"], "pfsim: --level 4: pfsim runs level-2 (one die) and level-3 (several dies of one node)"),
    (["--device", "4-x"], "pfsim: --device 4-x: a device id or a range"),
    (["--pfsim-set", "core.subblock_register"], "pfsim: --pfsim-set core.subblock_register: KEY=VALUE"),
])
def test_bad_options_are_usage_errors_naming_them(tmp_path, args, message):
    rc, out = pfsim_test(scene(tmp_path, CHAIN), *args, "--collect-only", "-q")
    assert rc == 4 and message in out, out


def test_a_fixture_pfsim_lacks_is_a_usage_error_naming_it(tmp_path):
    body = CHAIN + "\n    def test_peer(self, st_network1_peer):\n        pass\n"
    rc, out = pfsim_test(scene(tmp_path, body), "--collect-only", "-q")
    assert rc == 4, out
    assert ("TestChain::test_peer uses fixture 'st_network1_peer', which neither pfsim's harness (st_platform, "
            "st_worker, st_device_ids) nor the test's conftest.py provides") in out, out
    # negative control: the fixtures pfsim provides collect
    rc, out = pfsim_test(scene(tmp_path, CHAIN + "\n    def test_f(self, st_worker, st_device_ids):\n        pass\n"),
                         "--collect-only", "-q")
    assert rc == 0, out


def test_a_level_pfsim_does_not_run_is_a_collection_error_naming_the_class(tmp_path):
    rc, out = pfsim_test(scene(tmp_path, CHAIN.replace("level=2", "level=4")), "--collect-only", "-q")
    assert rc == 2 and "TestChain: pfsim runs level-2 (one die) and level-3 (several dies of one node) scene tests, " \
        "not level 4" in out, out


def test_a_compile_error_is_printed_once(tmp_path):
    path = scene(tmp_path, CHAIN)
    with open(tmp_path / "kernels" / "aiv" / "kernel_add.cpp", "a") as f:
        f.write("\nint broken = ;\nint broken_too = ;\n")
    rc, out = pfsim_test(path)
    assert rc == 1, out
    errors = re.findall(r"kernel_add\.cpp:\d+:\d+: error", out)
    # two errors in the source (the negative control of the count), each printed once
    assert len(errors) == 2, out
    assert "During handling of the above exception" not in out, out


def test_a_name_of_simpler_s_harness_pfsim_lacks_is_an_import_error_naming_it():
    """Runs in this process: `pfsim test` installed the simpler names."""
    from simpler_setup.scene_test import SceneTestCase  # provided: the control
    assert SceneTestCase is pfsim.testing.SceneTestCase
    from simpler_setup.scene_test import _build_l2_ref_args  # provided since pipeline_slots  # noqa: F401
    with pytest.raises(ImportError, match=r"cannot import name '_temporary_env' from "
                                          r"'simpler_setup.scene_test': it is a private helper of simpler's own "
                                          r"harness that pfsim's harness does not provide"):
        from simpler_setup.scene_test import _temporary_env  # noqa: F401
    with pytest.raises(ModuleNotFoundError, match=r"No module named '_task_interface' on pfsim: it is simpler's "
                                                  r"native binding"):
        import _task_interface  # noqa: F401
    with pytest.raises(ImportError, match=r"'NoSuchThing' from 'simpler.task_interface': it is a name of simpler's"):
        from simpler.task_interface import NoSuchThing  # noqa: F401
    import simpler_setup.scene_test as provided
    assert not hasattr(provided, "__wrapped__")  # tools probing dunders see an AttributeError


def test_the_plugin_turns_pfsim_on_only_when_asked():
    """A gate: `-p pfsim.plugin` or `--platform pfsim` (an installed entry point
    otherwise leaves pytest, and a simpler harness beside it, alone)."""
    from pfsim.plugin import wanted
    assert wanted([], ["pfsim.plugin"]) and wanted(["x.py", "--platform", "pfsim"], [])
    assert wanted(["--platform=pfsim"], [])
    assert not wanted(["--platform", "a2a3sim"], []) and not wanted(["x.py"], ["other"])


def test_pfsim_set_reaches_every_worker_of_the_session(shared):
    body = CHAIN + """
    def test_the_setting(self, st_worker):
        print("subblock register:", st_worker.config["core.subblock_register"])
        assert st_worker.config["core.subblock_register"] == "lane"
"""
    path = scene(shared / "pfsim_set", body, sources=shared)
    rc, out = pfsim_test(path, "-k", "test_the_setting", "-s", "--pfsim-set", "core.subblock_register=lane")
    assert rc == 0 and "subblock register: lane" in out, out
    # negative control: without the option the worker has the preset's value
    rc, out = pfsim_test(path, "-k", "test_the_setting", "-s")
    assert rc == 1 and "subblock register: zero" in out, out


def test_a_forked_run_is_a_pfsim_test_run(tmp_path, shared):
    """The other tests here run `pfsim test` through forked_pytest (one server forked per call, torch
    imported once); the binary's own `pfsim test` gives the same exit status and output."""
    body = CHAIN.replace("args.out[:] = 2 * (args.a + args.b) + args.a", "doubling.golden(args)")
    path = scene(shared / "forked", "from simpler_setup.goldens import doubling\n" + body, sources=shared)
    site = fake_simpler(tmp_path / "site")

    def both(*args, env=None):
        forked = forked_pytest.pfsim_test(*args, cwd=tmp_path, env=env)
        real = subprocess.run([pfsim.find_binary(), "test", *map(str, args)], capture_output=True, text=True,
                              timeout=600, cwd=tmp_path, env=env)
        assert forked.returncode == real.returncode, (forked, real)
        assert [without_times(s) for s in (forked.stdout, forked.stderr)] == [
            without_times(s) for s in (real.stdout, real.stderr)], (forked, real)
        return forked

    def without_times(text):  # "== 1 passed in 3.2s ==" (the rule's length follows the time's)
        return [re.sub(r" in [\d.]+s", "", line).strip("= ") for line in text.splitlines()]

    # a run, in the caller's folder, with its environment (a simpler installation on PYTHONPATH)
    run = both(path, "-p", "no:cacheprovider", "-rA", env=dict(os.environ, PYTHONPATH=site))
    assert run.returncode == 0 and "TestChain::test_run[small]: " in run.stdout, run
    # negative control: without it, the same collection error from both
    run = both(path, "-p", "no:cacheprovider", "--collect-only", "-q")
    assert run.returncode == 2 and "No module named 'simpler_setup.goldens'" in run.stdout, run

"""One description per shipped case: a case folder's scene test takes its
callable, cases, tolerances and (unless it computes torch values) its arguments
and goldens from the folder's case files (pfsim.testing.CaseFileTest), so the
scene test and `pfsim check` cannot describe the case differently."""

import ast
import glob
import json
import os
import shutil
import subprocess
import sys

import pytest

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.normpath(os.path.join(HERE, "..", "..", "cases"))
DESCRIPTION = {"CALLABLE", "CASES", "RTOL", "ATOL"}


def own_descriptions(path):
    """Each class of a scene test file that describes a case itself: (class, what it writes),
    for a class that is no CaseFileTest or that writes any of CALLABLE, CASES, RTOL, ATOL."""
    found = []
    for node in ast.walk(ast.parse(open(path).read(), path)):
        if not isinstance(node, ast.ClassDef):
            continue
        written = {t.id for stmt in node.body if isinstance(stmt, ast.Assign) for t in stmt.targets
                   if isinstance(t, ast.Name)} & DESCRIPTION
        bases = {b.id if isinstance(b, ast.Name) else getattr(b, "attr", "") for b in node.bases}
        if "CaseFileTest" not in bases or written:
            found.append((node.name, sorted(written) or sorted(bases)))
    return found


def scene_tests():
    return sorted(glob.glob(os.path.join(CASES, "*", "test_*.py")))


def test_every_shipped_scene_test_takes_its_description_from_its_case_files():
    assert len(scene_tests()) == 7
    for path in scene_tests():
        assert own_descriptions(path) == [], path


def test_a_scene_test_that_describes_its_case_itself_is_found(tmp_path):
    """Negative control: the check above finds a scene test written beside its case file."""
    path = tmp_path / "test_mine.py"
    path.write_text("class TestMine(SceneTestCase):\n    CALLABLE = {}\n    CASES = []\n"
                    "class TestHalf(CaseFileTest):\n    CASE_FILES = ['case.toml']\n    RTOL = 0\n")
    assert own_descriptions(path) == [("TestMine", ["CALLABLE", "CASES"]), ("TestHalf", ["RTOL"])]


def every_case_file_in_a_scene_test():
    """(folder, file) of each case file a shipped scene test names."""
    named = set()
    for path in scene_tests():
        for node in ast.walk(ast.parse(open(path).read(), path)):
            if isinstance(node, ast.Assign) and any(getattr(t, "id", "") == "CASE_FILES" for t in node.targets):
                for entry in ast.literal_eval(node.value):
                    named.add((os.path.basename(os.path.dirname(path)),
                               entry if isinstance(entry, str) else entry["file"]))
    return named


def test_every_case_file_of_a_folder_with_a_scene_test_is_one_of_its_cases():
    named = every_case_file_in_a_scene_test()
    folders = {folder for folder, _ in named}
    on_disk = {(folder, os.path.basename(f)) for folder in folders
               for f in glob.glob(os.path.join(CASES, folder, "*.toml"))}
    assert on_disk == named


def case_data(*args):
    return subprocess.run([pfsim.find_binary(), "case-data", *map(str, args)], capture_output=True, text=True)


def test_case_data_gives_the_values_and_goldens_a_run_compares_with(tmp_path):
    import numpy as np

    done = case_data(os.path.join(CASES, "vector_chain", "case.toml"), "--out", tmp_path)
    assert done.returncode == 0, done.stderr
    described = json.loads(done.stdout)
    assert [(t["name"], t["dtype"], t["shape"], t["output"]) for t in described["tensors"]] == [
        ("a", "float32", [16384], False), ("b", "float32", [16384], False), ("out", "float32", [16384], True)]
    assert described["scalars"] == [{"name": "blocks", "type": "int64", "bits": 4}]
    assert described["orchestration"]["source"].endswith("vector_chain_orch.cpp") and not described["enable_sdma"]
    assert np.array_equal(np.load(tmp_path / "a.npy"), np.arange(16384, dtype=np.float32))
    assert np.array_equal(np.load(tmp_path / "out.golden.npy"), 3 * np.arange(16384, dtype=np.float32) + 2)
    # a [golden] source's golden, for --arg: routed_warm's gate above every score keeps row 1 at zero
    done = case_data(os.path.join(CASES, "routed_warm", "case.toml"), "--arg", "threshold=1000", "--arg", "rows=16",
                     "--arg", "blocks=4", "--out", tmp_path / "rw")
    assert done.returncode == 0, done.stderr
    y = np.load(tmp_path / "rw" / "Y.golden.npy")
    assert y.shape == (2, 16) and y[0].all() and not y[1].any()


def test_case_data_refuses_a_bad_case_file_naming_its_line(tmp_path):
    bad = tmp_path / "case.toml"
    bad.write_text(open(os.path.join(CASES, "vector_chain", "case.toml")).read().replace('init = "arange"',
                                                                                          'init = "arrange"'))
    done = case_data(bad)
    assert done.returncode == 2 and "case.toml:" in done.stderr and "init" in done.stderr and not done.stdout


def pfsim_test(path):
    r = subprocess.run([pfsim.find_binary(), "test", str(path), "-p", "no:cacheprovider", "-rA"],
                       capture_output=True, text=True, timeout=600)
    return r.returncode, r.stdout + r.stderr


def vector_chain_copy(tmp_path, case_toml=None, test=None):
    shutil.copytree(os.path.join(CASES, "vector_chain"), tmp_path / "vc")
    if case_toml:
        (tmp_path / "vc" / "case.toml").write_text(case_toml(open(tmp_path / "vc" / "case.toml").read()))
    if test:
        (tmp_path / "vc" / "test_vector_chain.py").write_text(test(open(tmp_path / "vc" / "test_vector_chain.py").read()))
    return tmp_path / "vc" / "test_vector_chain.py"


def test_the_derived_scene_test_checks_the_case_files_golden(tmp_path):
    """The golden a derived scene test compares with is the case file's: a wrong one fails it."""
    path = vector_chain_copy(tmp_path, case_toml=lambda t: t.replace("start = 2, step = 3", "start = 2, step = 4"))
    rc, out = pfsim_test(path)
    assert rc == 1 and "output 'out' differs from the golden" in out, out


def test_a_derived_scene_test_cannot_be_marked_otherwise_than_its_case_file(tmp_path):
    """A marker that says sdma over a case file that says enable_sdma = false fails, before it runs."""
    path = vector_chain_copy(tmp_path, test=lambda t: t.replace("@scene_test", "@pytest.mark.sdma\n@scene_test")
                             .replace("from pfsim", "import pytest\nfrom pfsim", 1))
    rc, out = pfsim_test(path)
    assert rc == 1 and "marked sdma, but its case file says enable_sdma = false" in out, out


def load_scene(path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(f"scene_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_torch_values_must_be_the_arguments_the_case_file_declares(tmp_path):
    """A torch-valued scene test writes its own arguments; one the case file declares otherwise is caught."""
    shutil.copytree(os.path.join(CASES, "cv_pipeline"), tmp_path / "cv")
    cls = load_scene(tmp_path / "cv" / "test_cv_pipeline.py").TestCvPipeline
    test = cls()
    test._case_name = "linear_relu_32x256x256"
    assert test._differs_from_case_file(test.generate_args({"seed": 17})) is None
    # negative control: the same test with a bias of another shape
    text = open(tmp_path / "cv" / "test_cv_pipeline.py").read()
    (tmp_path / "cv" / "test_cv_pipeline.py").write_text(text.replace("torch.randn(1, N, generator=g)",
                                                                      "torch.randn(2, N, generator=g)"))
    cls = load_scene(tmp_path / "cv" / "test_cv_pipeline.py").TestCvPipeline
    test = cls()
    test._case_name = "linear_relu_32x256x256"
    assert test._differs_from_case_file(test.generate_args({"seed": 17})) == (
        "tensor 'bias' is float32[2, 256], where case.toml declares float32[1, 256]")


def test_a_case_file_test_may_not_write_its_own_description():
    from pfsim.testing import CaseFileTest

    with pytest.raises(ValueError, match="takes CALLABLE from its CASE_FILES"):
        type("TestBoth", (CaseFileTest,), {"__module__": __name__, "CASE_FILES": ["x.toml"], "CALLABLE": {}})
    with pytest.raises(ValueError, match="CASE_FILES\\[0\\]: .*nothing.toml"):
        type("TestMissing", (CaseFileTest,), {"__module__": __name__, "CASE_FILES": ["nothing.toml"]})

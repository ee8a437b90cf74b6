"""The shipped cases whose goldens are torch's (attention_step, mlp_step,
cv_pipeline) run under `pfsim check` from .npy files: these must be exactly
what their scene tests generate and compute (tools/case_data.py writes them)."""

import filecmp
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CASES = ["attention_step", "mlp_step", "cv_pipeline"]
# The torch that wrote the committed goldens (setup.sh's). Another torch computes
# bfloat16 matmuls differently in the last bits: the comparison is only exact with this one.
TORCH = "2.13.0"


def regenerate(case, out):
    test = os.path.join(ROOT, "cases", case, f"test_{case}.py")
    return subprocess.run([sys.executable, os.path.join(ROOT, "tools/case_data.py"), test, str(out)],
                          capture_output=True, text=True, check=True, env={**os.environ}).stdout.split()


@pytest.mark.parametrize("case", CASES)
def test_the_committed_npy_files_are_the_scene_tests_values(case, tmp_path):
    import torch

    if torch.__version__.split("+")[0] != TORCH:
        pytest.skip(f"the committed goldens are torch {TORCH}'s; this is torch {torch.__version__}")
    written = regenerate(case, tmp_path)
    committed = os.path.join(ROOT, "cases", case, "data")
    assert written
    for path in written:
        rel = os.path.relpath(path, tmp_path)
        assert filecmp.cmp(path, os.path.join(committed, rel), shallow=False), f"{case}/data/{rel} is stale: run tools/case_data.py"
    on_disk = {os.path.relpath(os.path.join(d, f), committed) for d, _, fs in os.walk(committed) for f in fs}
    assert on_disk == {os.path.relpath(p, tmp_path) for p in written}


def test_a_changed_golden_is_caught(tmp_path):
    """Negative control: a scene test whose golden changes no longer matches the committed file."""
    written = regenerate("cv_pipeline", tmp_path)
    golden = next(p for p in written if p.endswith("y.golden.npy"))
    with open(golden, "r+b") as f:
        f.seek(-4, os.SEEK_END)
        f.write(b"\x00\x00\x80\x7f")
    committed = os.path.join(ROOT, "cases/cv_pipeline/data", os.path.relpath(golden, tmp_path))
    assert not filecmp.cmp(golden, committed, shallow=False)

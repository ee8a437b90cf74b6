"""Writes a scene test's inputs and torch goldens as .npy files, so that a case
file can run the same case under `pfsim check` (which has no Python).

Usage: python3 tools/case_data.py TEST.py [OUT_DIR]
For each SceneTestCase class in TEST.py and each of its CASES, writes
OUT_DIR/<case name>/<tensor>.npy (every tensor's initial values, but for
outputs that start at zero) and <output>.golden.npy (each output's golden,
from compute_golden). OUT_DIR
defaults to the test's folder's data/. bfloat16 is written as its raw bits
(<u2), as case files read it. Run with the pfsim package importable
(PYTHONPATH="$(pfsim python-path)"); tests/python/test_case_data.py checks
that the committed files are what this writes.
"""

import importlib.util
import os
import sys

import numpy
import torch


def as_numpy(tensor):
    if tensor.dtype == torch.bfloat16:
        return tensor.contiguous().view(torch.int16).numpy().view(numpy.uint16)
    return tensor.contiguous().numpy()


def scene_classes(path):
    """The scene test classes of `path` that compute their own values (a CaseFileTest
    without its own generate_args takes them from its case files: nothing to write)."""
    from pfsim.testing import CaseFileTest, SceneTestCase
    spec = importlib.util.spec_from_file_location(os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # inspect finds a class's file through it
    spec.loader.exec_module(module)
    return [c for c in vars(module).values()
            if isinstance(c, type) and issubclass(c, SceneTestCase) and c.CASES
            and not (issubclass(c, CaseFileTest) and c.generate_args is CaseFileTest.generate_args)]


def write(path, out_dir):
    from pfsim import Callable
    written = []
    for cls in scene_classes(path):
        outputs = Callable(orchestration="", signature=cls.CALLABLE["orchestration"].get("signature"))
        for case in cls.CASES:
            test = cls()
            params = case.get("params", {})
            args = test.generate_args(params)
            golden = args.clone()
            test.compute_golden(golden, params)
            folder = os.path.join(out_dir, case["name"])
            os.makedirs(folder, exist_ok=True)
            for i, name in enumerate(args.tensor_names):
                value = getattr(args, name)
                if not (outputs.is_output(i) and not value.any()):  # outputs starting at zero: init = "zeros"
                    numpy.save(os.path.join(folder, f"{name}.npy"), as_numpy(value))
                    written.append(os.path.join(folder, f"{name}.npy"))
                if outputs.is_output(i):
                    numpy.save(os.path.join(folder, f"{name}.golden.npy"), as_numpy(getattr(golden, name)))
                    written.append(os.path.join(folder, f"{name}.golden.npy"))
    return written


if __name__ == "__main__":
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__)
    test_path = sys.argv[1]
    out = sys.argv[2] if len(sys.argv) == 3 else os.path.join(os.path.dirname(os.path.abspath(test_path)), "data")
    for f in write(test_path, out):
        print(f)

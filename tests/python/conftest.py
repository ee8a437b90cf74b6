import os
import shutil

import pytest

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "cases")


def marked_line(path, marker):
    """"FILE:LINE" (the file's name) of the line of `path` that ends with `marker`."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith(marker):
                return f"{os.path.basename(path)}:{n}"
    raise KeyError(marker)


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One copy of vector_chain's kernels for the scenes that run them unedited: copied and loaded once
    for all, each scene in a folder of its own inside it."""
    folder = tmp_path_factory.mktemp("shared")
    shutil.copytree(os.path.join(CASES, "vector_chain", "kernels"), folder / "kernels")
    return folder


@pytest.fixture(scope="module")
def typed_kernels(tmp_path_factory):
    """Builds a test kernel whose element types a generated header sets, once per
    (source, header): get(orchestration, source, core_type, header_name,
    header_text) -> (worker, handle), paths relative to this folder. Each build
    has its own worker; all close at the module's end."""
    made = {}

    def get(orchestration, source, core_type, header_name, header_text):
        key = (source, header_text)
        if key not in made:
            inc = tmp_path_factory.mktemp("types")
            (inc / header_name).write_text(header_text)
            worker = pfsim.Worker()
            made[key] = (worker, worker.register(pfsim.Callable(
                orchestration=os.path.join(HERE, orchestration),
                incores=[{"func_id": 0, "source": os.path.join(HERE, source), "core_type": core_type}],
                include_dirs=[str(inc)])))
        return made[key]
    yield get
    for worker, _ in made.values():
        worker.close()


def per_type(typed_kernels, orchestration, source, ctypes, r, c):
    """One build of an AIV kernel over R x C tiles for every element type of `ctypes` (torch dtype ->
    C++ type), as its "tile_ops_type.h" lists them (R, C, TILE_TYPES(X) with one X(index, T) each):
    get(dtype) -> (worker, handle, the type's index: the kernel's last scalar)."""
    types = " ".join(f"X({i}, {t})" for i, t in enumerate(ctypes.values()))
    worker, handle = typed_kernels(orchestration, source, "aiv", "tile_ops_type.h",
                                   f"#pragma once\nconstexpr int R = {r}, C = {c};\n#define TILE_TYPES(X) {types}\n")
    return lambda dtype: (worker, handle, list(ctypes).index(dtype))


def _byte_copy():
    return pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/byte_copy_orch.cpp",
                          "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_byte_copy.cpp", "core_type": "aiv"}],
    }, HERE)


@pytest.fixture
def byte_copy():
    """The byte-copy callable: out = in for any dtype; the scalar spins the kernel first."""
    return _byte_copy()


@pytest.fixture(scope="module")
def byte_copy_module():
    return _byte_copy()


@pytest.fixture
def prefetch_demo():
    return pfsim.Callable.from_dict({
        "orchestration": {"source": "kernels/orchestration/prefetch_demo_orch.cpp",
                          "function_name": "prefetch_demo_orchestration", "config_name": "prefetch_demo_config",
                          "signature": [pfsim.ArgDirection.IN, pfsim.ArgDirection.OUT]},
        "incores": [{"func_id": 0, "source": "kernels/aiv/kernel_prefetch_copy.cpp", "core_type": "aiv"}],
    }, os.path.join(CASES, "prefetch_demo"))

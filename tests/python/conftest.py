import os

import pytest

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
CASES = os.path.join(HERE, "..", "..", "kernels", "cases")


def marked_line(path, marker):
    """"FILE:LINE" (the file's name) of the line of `path` that ends with `marker`."""
    with open(path) as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith(marker):
                return f"{os.path.basename(path)}:{n}"
    raise KeyError(marker)


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

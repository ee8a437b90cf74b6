"""Scene test of the prefetch_demo case: one AIV task prefetches its input into
L2, waits, and copies it to the output. The prefetch changes no value."""

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

N = 128


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestPrefetchDemo(SceneTestCase):
    RTOL = 0
    ATOL = 0

    CALLABLE = {
        "orchestration": {
            "source": "kernels/orchestration/prefetch_demo_orch.cpp",
            "function_name": "prefetch_demo_orchestration",
            "config_name": "prefetch_demo_config",
            "signature": [D.IN, D.OUT],
        },
        "incores": [
            {"func_id": 0, "source": "kernels/aiv/kernel_prefetch_copy.cpp", "core_type": "aiv",
             "signature": [D.IN, D.OUT]},
        ],
    }

    CASES = [{"name": "copy", "platforms": ["a2a3"], "params": {}}]

    def generate_args(self, params):
        return TaskArgsBuilder(
            TensorArg("src", torch.arange(N, dtype=torch.float32) / 8.0),
            TensorArg("out", torch.full((N,), -1.0, dtype=torch.float32)),
        )

    def compute_golden(self, args, params):
        args.out[:] = args.src

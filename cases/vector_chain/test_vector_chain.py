"""Scene test of the vector_chain case: out = 2 * (a + b) + a through three
dependent 4-block AIV tasks with runtime-allocated intermediates."""

import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestVectorChain(SceneTestCase):
    RTOL = 0
    ATOL = 0

    CALLABLE = {
        "orchestration": {
            "source": "kernels/orchestration/vector_chain_orch.cpp",
            "function_name": "aicpu_orchestration_entry",
            "signature": [D.IN, D.IN, D.OUT],
        },
        "incores": [
            {"func_id": 0, "source": "kernels/aiv/kernel_add.cpp", "core_type": "aiv"},
            {"func_id": 1, "source": "kernels/aiv/kernel_scale.cpp", "core_type": "aiv"},
        ],
    }

    CASES = [
        {"name": "blocks4", "platforms": ["a2a3sim", "a2a3"], "params": {"n": 16384, "blocks": 4}},
        {"name": "blocks8", "platforms": ["a2a3"], "params": {"n": 32768, "blocks": 8}},
    ]

    def generate_args(self, params):
        n = params["n"]
        return TaskArgsBuilder(
            TensorArg("a", torch.arange(n, dtype=torch.float32)),
            TensorArg("b", torch.ones(n, dtype=torch.float32)),
            TensorArg("out", torch.zeros(n, dtype=torch.float32)),
            Scalar("blocks", params["blocks"]),
        )

    def compute_golden(self, args, params):
        args.out[:] = 2 * (args.a + args.b) + args.a

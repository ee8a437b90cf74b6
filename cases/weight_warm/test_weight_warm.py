"""Scene test of the weight_warm cases: a cube matmul runs while a vector task
prefetches the weights of the next, bandwidth-bound task (a row-sum over W).
mode 0: fire-and-forget warm; 1: the warm waits; 2: deferred completion (the
row-sum starts when the engine is done). oversize: W larger than the L2."""

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestWeightWarm(SceneTestCase):
    RTOL = 0
    ATOL = 0

    CALLABLE = {
        "orchestration": {
            "source": "kernels/orchestration/weight_warm_orch.cpp",
            "function_name": "aicpu_orchestration_entry",
            "signature": [D.IN, D.IN, D.OUT, D.IN, D.OUT],
        },
        "incores": [
            {"func_id": 0, "source": "kernels/aic/kernel_matmul_repeat.cpp", "core_type": "aic"},
            {"func_id": 1, "source": "kernels/aiv/kernel_warm.cpp", "core_type": "aiv"},
            {"func_id": 2, "source": "kernels/aiv/kernel_rowsum.cpp", "core_type": "aiv"},
        ],
    }

    CASES = [
        {"name": "fire_and_forget", "platforms": ["a2a3"], "params": {"rows": 512, "iters": 150, "blocks": 8, "mode": 0, "work": 1}},
        {"name": "waited", "platforms": ["a2a3"], "params": {"rows": 512, "iters": 150, "blocks": 8, "mode": 1, "work": 1}},
        {"name": "deferred", "platforms": ["a2a3"], "params": {"rows": 512, "iters": 150, "blocks": 8, "mode": 2, "work": 1}},
        {"name": "oversize", "platforms": ["a2a3"],
         "params": {"rows": 16384, "iters": 150, "blocks": 32, "mode": 0, "work": 1}},
    ]

    def generate_args(self, params):
        rows = params["rows"]
        return TaskArgsBuilder(
            TensorArg("A", torch.ones(128, 128, dtype=torch.float16)),
            TensorArg("B", torch.ones(128, 128, dtype=torch.float16)),
            TensorArg("C", torch.zeros(128, 128, dtype=torch.float32)),
            TensorArg("W", torch.ones(rows, 4096, dtype=torch.float32)),
            TensorArg("Y", torch.zeros(rows, dtype=torch.float32)),
            Scalar("iters", params["iters"]),
            Scalar("mode", params["mode"]),
            Scalar("blocks", params["blocks"]),
            Scalar("work", params["work"]),
        )

    def compute_golden(self, args, params):
        args.C[:] = args.A.float() @ args.B.float() * params["iters"]
        args.Y[:] = args.W.sum(dim=1)

"""Scene test of the routed_warm case: a router task picks two of the experts,
the orchestrator reads its choice back (get_tensor_data on a tensor it
allocated with alloc_tensors) and warms those experts' weight views while a
cube task runs; the runner-up's row-sum is predicated on its gate. top2: both
experts run; top1: the gate is off, the runner-up's row-sum retires without a
core and its row of Y keeps its zeros."""

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

COLS = 4096


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestRoutedWarm(SceneTestCase):
    RTOL = 0
    ATOL = 0

    CALLABLE = {
        "orchestration": {
            "source": "kernels/orchestration/routed_warm_orch.cpp",
            "function_name": "aicpu_orchestration_entry",
            "signature": [D.IN, D.IN, D.OUT, D.IN, D.IN, D.OUT],
        },
        "incores": [
            {"func_id": 0, "source": "../weight_warm/kernels/aic/kernel_matmul_repeat.cpp", "core_type": "aic"},
            {"func_id": 1, "source": "kernels/aiv/kernel_router.cpp", "core_type": "aiv"},
            {"func_id": 2, "source": "kernels/aiv/kernel_warm_experts.cpp", "core_type": "aiv"},
            {"func_id": 3, "source": "../weight_warm/kernels/aiv/kernel_rowsum.cpp", "core_type": "aiv"},
        ],
    }

    BASE = {"experts": 8, "rows": 256, "iters": 150, "blocks": 8, "work": 1, "seed": 44}
    CASES = [
        {"name": "top2", "platforms": ["a2a3"], "params": {**BASE, "threshold": 0}},
        {"name": "top1", "platforms": ["a2a3"], "params": {**BASE, "threshold": 1000}},
    ]

    def generate_args(self, params):
        g = torch.Generator().manual_seed(params["seed"])
        experts, rows = params["experts"], params["rows"]
        return TaskArgsBuilder(
            TensorArg("A", torch.ones(128, 128, dtype=torch.float16)),
            TensorArg("B", torch.ones(128, 128, dtype=torch.float16)),
            TensorArg("C", torch.zeros(128, 128, dtype=torch.float32)),
            TensorArg("scores", torch.randperm(1000, generator=g)[:experts].to(torch.int32)),
            TensorArg("W", torch.randint(0, 4, (experts * rows, COLS), generator=g).to(torch.float32)),
            TensorArg("Y", torch.zeros(2, rows, dtype=torch.float32)),
            Scalar("iters", params["iters"]),
            Scalar("threshold", params["threshold"]),
            Scalar("blocks", params["blocks"]),
            Scalar("work", params["work"]),
        )

    def compute_golden(self, args, params):
        args.C[:] = args.A.float() @ args.B.float() * params["iters"]
        top = torch.topk(args.scores, 2).indices.tolist()  # distinct scores: no tie
        experts = args.W.reshape(params["experts"], params["rows"], COLS)
        args.Y[0] = experts[top[0]].sum(dim=1)
        if args.scores[top[1]] >= params["threshold"]:
            args.Y[1] = experts[top[1]].sum(dim=1)

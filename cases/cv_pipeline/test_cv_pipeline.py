"""Scene test of the cv_pipeline case: a bf16 layer on the cube, then
relu(X W + bias) as a cube->vector TPUSH/TPOP pipeline in one cluster (the
cube pushes each column block of X W, the vector cores add the bias and apply
ReLU while the cube computes the next block), W warmed into L2 while the first
layer runs."""

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

M, K, N = 32, 256, 256
LINEAR = "kernels/mix/kernel_linear_relu.cpp"


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestCvPipeline(SceneTestCase):
    RTOL = 1e-3  # the float accumulation order differs from torch's
    ATOL = 1e-3
    CALLABLE = {
        "orchestration": {"source": "kernels/orchestration/cv_pipeline_orch.cpp",
                          "signature": [D.IN, D.IN, D.IN, D.IN, D.OUT]},
        "incores": [
            {"func_id": 0, "source": "../mlp_step/kernels/aic/kernel_gemm_bf16.cpp", "core_type": "aic"},
            {"func_id": 1, "source": "../weight_warm/kernels/aiv/kernel_warm.cpp", "core_type": "aiv"},
            {"func_id": 2, "source": LINEAR, "core_type": "aic"},
            {"func_id": 3, "source": LINEAR, "core_type": "aiv"},
        ],
    }
    CASES = [{"name": "linear_relu_32x256x256", "platforms": ["a2a3"], "params": {"seed": 17}}]

    def generate_args(self, params):
        g = torch.Generator().manual_seed(params["seed"])
        return TaskArgsBuilder(
            TensorArg("a", torch.randn(M, K, generator=g).to(torch.bfloat16)),
            TensorArg("b", (torch.randn(K, N, generator=g) / 16).to(torch.bfloat16)),
            TensorArg("w", torch.randn(N, N, generator=g) / 16),
            TensorArg("bias", torch.randn(1, N, generator=g)),
            TensorArg("y", torch.zeros(M, N)),
        )

    def compute_golden(self, args, params):
        x = args.a.float() @ args.b.float()
        args.y[:] = torch.relu(x @ args.w + args.bias)

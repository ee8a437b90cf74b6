"""Scene test of the mlp_step case: two matmul layers staged through L1 and L0
(TEXTRACT of K slices, TMATMUL then TMATMUL_ACC), the layer between on a
vector core (TCVT; for W8A8, int32 -> half -> scaled -> int8), the second
layer's weights warmed into L2 while the first layer runs. In bf16 with
float accumulation, and W8A8 (int8 operands, exact int32 accumulation)."""

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

M, K, N = 32, 256, 256
SCALE = 1.0 / 2048


def callable_for(gemm_source):
    return {
        "orchestration": {"source": "kernels/orchestration/mlp_orch.cpp", "signature": [D.IN, D.IN, D.IN, D.OUT]},
        "incores": [
            {"func_id": 0, "source": gemm_source, "core_type": "aic"},
            {"func_id": 1, "source": "../weight_warm/kernels/aiv/kernel_warm.cpp", "core_type": "aiv"},
            {"func_id": 2, "source": "kernels/aiv/kernel_requant.cpp", "core_type": "aiv"},
        ],
    }


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestMlpBf16(SceneTestCase):
    RTOL = 1e-3  # the float accumulation order differs from torch's
    ATOL = 1e-3
    CALLABLE = callable_for("kernels/aic/kernel_gemm_bf16.cpp")
    CASES = [{"name": "bf16_32x256x256", "platforms": ["a2a3"], "params": {"seed": 11}}]

    def generate_args(self, params):
        g = torch.Generator().manual_seed(params["seed"])
        return TaskArgsBuilder(
            TensorArg("x", torch.randn(M, K, generator=g).to(torch.bfloat16)),
            TensorArg("w1", (torch.randn(K, N, generator=g) / 16).to(torch.bfloat16)),
            TensorArg("w2", (torch.randn(N, N, generator=g) / 16).to(torch.bfloat16)),
            TensorArg("y", torch.zeros(M, N)),
            Scalar("pair", 0),
            Scalar("scale", 0.0),
        )

    def compute_golden(self, args, params):
        h = (args.x.float() @ args.w1.float()).to(torch.bfloat16)
        args.y[:] = h.float() @ args.w2.float()


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestMlpW8A8(SceneTestCase):
    RTOL = 0  # integer matmuls are exact; the requant's roundings are torch's
    ATOL = 0
    CALLABLE = callable_for("kernels/aic/kernel_gemm_w8a8.cpp")
    CASES = [{"name": "w8a8_32x256x256", "platforms": ["a2a3"], "params": {"seed": 13}}]

    def generate_args(self, params):
        g = torch.Generator().manual_seed(params["seed"])
        return TaskArgsBuilder(
            TensorArg("x", torch.randint(-128, 128, (M, K), generator=g, dtype=torch.int8)),
            TensorArg("w1", torch.randint(-128, 128, (K, N), generator=g, dtype=torch.int8)),
            TensorArg("w2", torch.randint(-128, 128, (N, N), generator=g, dtype=torch.int8)),
            TensorArg("y", torch.zeros(M, N, dtype=torch.int32)),
            Scalar("pair", 1),
            Scalar("scale", SCALE),
        )

    def compute_golden(self, args, params):
        c1 = args.x.int() @ args.w1.int()
        scaled = c1.to(torch.float16).float() * torch.tensor(SCALE, dtype=torch.float16).float()
        h = torch.round(scaled.to(torch.float16).float()).clamp(-128, 127).to(torch.int8)
        args.y[:] = h.int() @ args.w2.int()

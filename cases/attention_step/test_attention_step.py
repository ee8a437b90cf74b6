"""Scene test of the attention_step case: S = Q K^T on the cube, an
online-softmax step on a vector core (TROWMAX, TROWEXPANDSUB, TEXP, TROWSUM,
TCVT to bf16), O = P V on the cube, with V warmed into L2 by a vector task
while Q K^T runs."""

import math

import pytest
import torch

from pfsim.testing import ArgDirection as D
from pfsim.testing import Scalar, SceneTestCase, TaskArgsBuilder, TensorArg, scene_test

M, DIM, N = 16, 64, 512


@pytest.mark.sdma
@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestAttentionStep(SceneTestCase):
    # P is rounded to bf16 before P V: one bf16 ulp (2^-8 relative) of P moves O by about that much.
    RTOL = 1e-2
    ATOL = 1e-2

    CALLABLE = {
        "orchestration": {
            "source": "kernels/orchestration/attention_orch.cpp",
            "signature": [D.IN, D.IN, D.IN, D.OUT, D.OUT, D.OUT],
        },
        "incores": [
            {"func_id": 0, "source": "kernels/aic/kernel_qk.cpp", "core_type": "aic"},
            {"func_id": 1, "source": "../weight_warm/kernels/aiv/kernel_warm.cpp", "core_type": "aiv"},
            {"func_id": 2, "source": "kernels/aiv/kernel_softmax.cpp", "core_type": "aiv"},
            {"func_id": 3, "source": "kernels/aic/kernel_pv.cpp", "core_type": "aic"},
        ],
    }

    CASES = [{"name": "bf16_16x512x64", "platforms": ["a2a3"], "params": {"seed": 7}}]

    def generate_args(self, params):
        g = torch.Generator().manual_seed(params["seed"])
        return TaskArgsBuilder(
            TensorArg("q", torch.randn(M, DIM, generator=g).to(torch.bfloat16)),
            TensorArg("kt", torch.randn(DIM, N, generator=g).to(torch.bfloat16)),
            TensorArg("v", torch.randn(N, DIM, generator=g).to(torch.bfloat16)),
            TensorArg("o", torch.zeros(M, DIM)),
            TensorArg("m", torch.zeros(M)),
            TensorArg("l", torch.zeros(M)),
            Scalar("scale", 1.0 / math.sqrt(DIM)),
        )

    def compute_golden(self, args, params):
        s = (args.q.float() @ args.kt.float()) * (1.0 / math.sqrt(DIM))
        m = s.amax(dim=1)
        p = torch.exp(s - m[:, None])
        args.m[:] = m
        args.l[:] = p.sum(dim=1)
        args.o[:] = p.to(torch.bfloat16).float() @ args.v.float()

"""Scene test of the attention_step case: S = Q K^T on the cube, an
online-softmax step on a vector core (TROWMAX, TROWEXPANDSUB, TEXP, TROWSUM,
TCVT to bf16), O = P V on the cube, with V warmed into L2 by a vector task
while Q K^T runs. Its callable, argument declarations and tolerances are
case.toml's; its values and golden are torch's, which case.toml reads as the .npy
files tools/case_data.py writes from this test (pfsim.testing.CaseFileTest)."""

import math

import torch

from pfsim.testing import CaseFileTest, Scalar, TaskArgsBuilder, TensorArg, scene_test

M, DIM, N = 16, 64, 512


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestAttentionStep(CaseFileTest):
    # P is rounded to bf16 before P V: one bf16 ulp (2^-8 relative) of P moves O by about that much
    # (case.toml's tolerances).
    CASE_FILES = [{"name": "bf16_16x512x64", "file": "case.toml", "params": {"seed": 7}}]

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

"""Scene test of the mlp_step case: two matmul layers staged through L1 and L0
(TEXTRACT of K slices, TMATMUL then TMATMUL_ACC), the layer between on a
vector core (TCVT; for W8A8, int32 -> half -> scaled -> int8), the second
layer's weights warmed into L2 while the first layer runs. In bf16 with
float accumulation, and W8A8 (int8 operands, exact int32 accumulation). Their
callables, argument declarations and tolerances are case.toml's and
case_w8a8.toml's; their values and goldens are torch's, which the case files
read as the .npy files tools/case_data.py writes from this test
(pfsim.testing.CaseFileTest)."""

import torch

from pfsim.testing import CaseFileTest, Scalar, TaskArgsBuilder, TensorArg, scene_test

M, K, N = 32, 256, 256
SCALE = 1.0 / 2048


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestMlpBf16(CaseFileTest):
    CASE_FILES = [{"name": "bf16_32x256x256", "file": "case.toml", "params": {"seed": 11}}]

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


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestMlpW8A8(CaseFileTest):
    CASE_FILES = [{"name": "w8a8_32x256x256", "file": "case_w8a8.toml", "params": {"seed": 13}}]

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

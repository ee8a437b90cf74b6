"""Scene test of the cv_pipeline case: a bf16 layer on the cube, then
relu(X W + bias) as a cube->vector TPUSH/TPOP pipeline in one cluster (the
cube pushes each column block of X W, the vector cores add the bias and apply
ReLU while the cube computes the next block), W warmed into L2 while the first
layer runs. Its callable, argument declarations and tolerances are case.toml's;
its values and golden are torch's, which case.toml reads as the .npy files
tools/case_data.py writes from this test (pfsim.testing.CaseFileTest)."""

import torch

from pfsim.testing import CaseFileTest, TaskArgsBuilder, TensorArg, scene_test

M, K, N = 32, 256, 256


@scene_test(level=2, runtime="tensormap_and_ringbuffer")
class TestCvPipeline(CaseFileTest):
    CASE_FILES = [{"name": "linear_relu_32x256x256", "file": "case.toml", "params": {"seed": 17}}]

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

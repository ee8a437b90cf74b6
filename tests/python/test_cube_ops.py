"""The cube path against torch: L1 -> L0 moves (TMOV, TEXTRACT), TMATMUL,
TMATMUL_ACC (both forms), TMATMUL_BIAS, for half, bfloat16 and float operands
accumulating in float, and int8 operands accumulating exactly in int32."""

import pytest
import torch

M, K, N = 32, 64, 32
TYPES = {torch.float16: ("pto::half", "float", torch.float32), torch.bfloat16: ("pto::bfloat16_t", "float", torch.float32),
         torch.float32: ("float", "float", torch.float32), torch.int8: ("int8_t", "int32_t", torch.int32)}


@pytest.fixture(scope="module")
def cube(typed_kernels):
    def get(dtype):
        ta, tc, _ = TYPES[dtype]
        return typed_kernels("kernels/orchestration/cube_ops_orch.cpp", "kernels/aic/kernel_cube_ops.cpp", "aic",
                             "cube_types.h", f"#pragma once\nusing TA = {ta};\nusing TC = {tc};\n"
                                             f"constexpr int M = {M}, K = {K}, N = {N};\n")
    return get


@pytest.mark.parametrize("dtype", list(TYPES), ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("form", ["TMATMUL", "TMATMUL+TMATMUL_ACC", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"])
def test_matmul_matches_torch(cube, dtype, form):
    worker, handle = cube(dtype)
    g = torch.Generator().manual_seed(3)
    acc = TYPES[dtype][2]
    if dtype == torch.int8:
        a = torch.randint(-128, 128, (M, K), generator=g, dtype=torch.int8)
        b = torch.randint(-128, 128, (K, N), generator=g, dtype=torch.int8)
        bias = torch.randint(-1000, 1000, (N,), generator=g, dtype=torch.int32)
        c_in = torch.randint(-1000, 1000, (M, N), generator=g, dtype=torch.int32)
    else:
        a, b = torch.randn(M, K, generator=g).to(dtype), torch.randn(K, N, generator=g).to(dtype)
        bias, c_in = torch.randn(N, generator=g), torch.randn(M, N, generator=g)
    c = c_in.clone()
    op = ["TMATMUL", "TMATMUL+TMATMUL_ACC", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"].index(form)
    worker.run(handle, [a, b, bias, c, op])
    prod = a.double() @ b.double()
    want = {0: prod, 1: 2 * prod, 2: prod + bias.double()[None, :], 3: c_in.double() + prod}[op]
    if dtype == torch.int8:
        assert torch.equal(c, want.to(torch.int64).to(torch.int32))
    else:
        torch.testing.assert_close(c.double(), want, rtol=1e-5, atol=1e-4)


def test_the_cube_takes_its_time_by_operand_type(cube):
    """int8 runs at core.cube_macs_int8, float at core.cube_macs_fp32: the same matmul takes less and more time."""
    times = {}
    for dtype in (torch.float16, torch.int8, torch.float32):
        worker, handle = cube(dtype)
        a = torch.ones(M, K, dtype=dtype)
        b = torch.ones(K, N, dtype=dtype)
        acc = TYPES[dtype][2]
        r = worker.run(handle, [a, b, torch.zeros(N, dtype=acc), torch.zeros(M, N, dtype=acc), 0])
        times[dtype] = r.time_ns
    assert times[torch.int8] < times[torch.float16] < times[torch.float32], times


def _k_order(a, b, c_in=None, bias=None, ks=None):
    """The float matmul as the cube computes it: each element's products summed in k order
    (or the order `ks`), each product and each sum rounded to float (torch's float elementwise
    ops round each)."""
    a, b = a.float(), b.float()
    acc = c_in.clone() if c_in is not None else torch.zeros(a.shape[0], b.shape[1])
    for k in ks if ks is not None else range(a.shape[1]):
        acc = acc + a[:, k:k + 1] * b[k:k + 1, :]
    return acc + bias[None, :] if bias is not None else acc


@pytest.mark.parametrize("n", [32, 48])
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("form", ["TMATMUL", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"])
def test_matmul_is_the_k_order_sum_bit_for_bit(typed_kernels, dtype, form, n):
    """TMATMUL's float values are exactly the k-order sum (columns 8 at a time in vector
    arithmetic must not change a bit). Negative control: the same sum in reverse k order
    differs from it in some bit."""
    ta, tc, _ = TYPES[dtype]
    worker, handle = typed_kernels("kernels/orchestration/cube_ops_orch.cpp", "kernels/aic/kernel_cube_ops.cpp", "aic",
                                   "cube_types.h", f"#pragma once\nusing TA = {ta};\nusing TC = {tc};\n"
                                                   f"constexpr int M = {M}, K = {K}, N = {n};\n")
    g = torch.Generator().manual_seed(11)
    a, b = torch.randn(M, K, generator=g).to(dtype), torch.randn(K, n, generator=g).to(dtype)
    bias, c_in = torch.randn(n, generator=g), torch.randn(M, n, generator=g)
    op = {"TMATMUL": 0, "TMATMUL_BIAS": 2, "TMATMUL_ACC(c, c_in, a, b)": 3}[form]
    c = c_in.clone()
    worker.run(handle, [a, b, bias, c, op])
    want = _k_order(a, b, c_in if op == 3 else None, bias if op == 2 else None)
    assert torch.equal(c, want)
    reverse = _k_order(a, b, c_in if op == 3 else None, bias if op == 2 else None, ks=range(K - 1, -1, -1))
    assert not torch.equal(c, reverse)

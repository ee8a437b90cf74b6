"""The cube path against torch: L1 -> L0 moves (TMOV, TEXTRACT), TMATMUL,
TMATMUL_ACC (both forms), TMATMUL_BIAS, for half, bfloat16 and float operands
accumulating in float, and int8 operands accumulating exactly in int32."""

import os
import re

import pytest
import torch

import pfsim

M, K, N = 32, 64, 32
TYPES = {torch.float16: ("pto::half", "float", torch.float32), torch.bfloat16: ("pto::bfloat16_t", "float", torch.float32),
         torch.float32: ("float", "float", torch.float32), torch.int8: ("int8_t", "int32_t", torch.int32)}


# Products around kMatmulShareMacs (pto-inst.hpp), the size from which TMATMUL sums its rows on two host
# threads where the device has a helper thread (PFSIM_TILE_THREADS=2): just below it, at it with two rows
# after the last block of three, at it with one, and a large product of an odd row count (127 rows: 42
# blocks and one).
SHARE_MACS = 1 << int(re.search(r"kMatmulShareMacs = 1 << (\d+);", open(os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "pto", "pto-inst.hpp")).read()).group(1))
SHARE_SHAPES = [(127, 64), (128, 64), (64, 128), (127, 128)]

# The (operand type, m, n) of every matmul below: M x N of each type, the k-order tests' shapes of
# each float type ((m, n): see there), and the two-thread tests' SHARE_SHAPES.
SHAPES = [(32, 48), (32, 80), (18, 40)]
VARIANTS = ([(dtype, M, N) for dtype in TYPES] + [(dtype, m, n) for dtype in TYPES if dtype != torch.int8
                                                   for m, n in SHAPES]
            + [(dtype, m, n) for dtype in (torch.bfloat16, torch.float32, torch.int8) for m, n in SHARE_SHAPES])
# The kernel's "cube_types.h": one build serves every test of this file.
CUBE_TYPES = (f"#pragma once\nconstexpr int K = {K};\n#define CUBE_VARIANTS(X) "
              + " ".join(f"X({i}, {TYPES[d][0]}, {TYPES[d][1]}, {m}, {n})" for i, (d, m, n) in enumerate(VARIANTS)) + "\n")


@pytest.fixture(scope="module")
def cube(typed_kernels):
    """The cube kernel with every variant of VARIANTS, on one worker:
    get(dtype, m, n) -> (worker, handle, the variant's index)."""
    worker, handle = typed_kernels("kernels/orchestration/cube_ops_orch.cpp", "kernels/aic/kernel_cube_ops.cpp", "aic",
                                   "cube_types.h", CUBE_TYPES)
    return lambda dtype, m=M, n=N: (worker, handle, VARIANTS.index((dtype, m, n)))


def _operands(dtype, m, n, g):
    """Random a (m x K), b (K x n), bias (n) and c_in (m x n) for a matmul of `dtype` operands."""
    if dtype == torch.int8:
        return (torch.randint(-128, 128, (m, K), generator=g, dtype=torch.int8),
                torch.randint(-128, 128, (K, n), generator=g, dtype=torch.int8),
                torch.randint(-1000, 1000, (n,), generator=g, dtype=torch.int32),
                torch.randint(-1000, 1000, (m, n), generator=g, dtype=torch.int32))
    a, b = torch.randn(m, K, generator=g).to(dtype), torch.randn(K, n, generator=g).to(dtype)
    return a, b, torch.randn(n, generator=g), torch.randn(m, n, generator=g)


@pytest.mark.parametrize("dtype", list(TYPES), ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("form", ["TMATMUL", "TMATMUL+TMATMUL_ACC", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"])
def test_matmul_matches_torch(cube, dtype, form):
    worker, handle, variant = cube(dtype)
    a, b, bias, c_in = _operands(dtype, M, N, torch.Generator().manual_seed(3))
    c = c_in.clone()
    op = ["TMATMUL", "TMATMUL+TMATMUL_ACC", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"].index(form)
    worker.run(handle, [a, b, bias, c, op, variant])
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
        worker, handle, variant = cube(dtype)
        a = torch.ones(M, K, dtype=dtype)
        b = torch.ones(K, N, dtype=dtype)
        acc = TYPES[dtype][2]
        r = worker.run(handle, [a, b, torch.zeros(N, dtype=acc), torch.zeros(M, N, dtype=acc), 0, variant])
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


# (m, n): 32 x 48 and 32 x 80, rows four at a time in blocks of 16 columns (80 single rows would take as a
# group of 64 and two of 8); 18 x 40: four blocks of four rows, then two single rows, and 8 columns after the 16s.
@pytest.mark.parametrize("m, n", SHAPES)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16, torch.float32], ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("form", ["TMATMUL", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"])
def test_matmul_is_the_k_order_sum_bit_for_bit(cube, dtype, form, m, n):
    """TMATMUL's float values are exactly the k-order sum (rows 4 and columns 8 to 64 at a time in
    vector arithmetic must not change a bit). Negative control: the same sum in reverse k order
    differs from it in some bit."""
    worker, handle, variant = cube(dtype, m, n)
    g = torch.Generator().manual_seed(11)
    a, b = torch.randn(m, K, generator=g).to(dtype), torch.randn(K, n, generator=g).to(dtype)
    bias, c_in = torch.randn(n, generator=g), torch.randn(m, n, generator=g)
    op = {"TMATMUL": 0, "TMATMUL_BIAS": 2, "TMATMUL_ACC(c, c_in, a, b)": 3}[form]
    c = c_in.clone()
    worker.run(handle, [a, b, bias, c, op, variant])
    want = _k_order(a, b, c_in if op == 3 else None, bias if op == 2 else None)
    assert torch.equal(c, want)
    reverse = _k_order(a, b, c_in if op == 3 else None, bias if op == 2 else None, ks=range(K - 1, -1, -1))
    assert not torch.equal(c, reverse)


def _adversarial(g, rows, cols, scale):
    """Random values with the cases where a different order or rounding shows: large values
    that cancel (+-2^24 beside small ones), denormal and underflowing products (scale 2^-70,
    whose products fall below float's smallest normal), and +-Inf and NaN (x86's default
    NaN, 0xffc00000, the one NaN an Inf - Inf makes, so every NaN has the same bits)."""
    x = torch.randn(rows, cols, generator=g)
    pick = torch.rand(rows, cols, generator=g)
    x = torch.where(pick < 0.15, torch.sign(x) * 2.0 ** 24, x)
    x = torch.where((pick >= 0.15) & (pick < 0.3), x * scale, x)
    special = torch.tensor([float("inf"), float("-inf"), -float("nan")])
    assert special[2:].view(torch.int32).item() == -0x400000  # 0xffc00000
    spots = torch.randint(0, rows * cols, (3,), generator=g)
    x.view(-1)[spots] = special
    return x


@pytest.mark.parametrize("form", ["TMATMUL", "TMATMUL_ACC(c, c_in, a, b)"])
def test_matmul_is_the_k_order_sum_on_adversarial_values(cube, form):
    """Cancellation, denormals, underflow, Inf and NaN: TMATMUL's float results are the k-order
    sum's bytes, element by element (Inf, NaN and signed zeros included). Negative control: the
    same sum in reverse k order differs in some byte."""
    n = 80
    worker, handle, variant = cube(torch.float32, M, n)
    g = torch.Generator().manual_seed(5)
    a, b = _adversarial(g, M, K, 2.0 ** -70), _adversarial(g, K, n, 2.0 ** -70)
    a[:4] = torch.randn(4, K, generator=g) * 2.0 ** -70  # and whole sums in the denormal range: C[:4, :8]
    b[:, :8] = torch.randn(K, 8, generator=g) * 2.0 ** -70
    c_in = _adversarial(g, M, n, 2.0 ** -130)  # denormals themselves
    op = {"TMATMUL": 0, "TMATMUL_ACC(c, c_in, a, b)": 3}[form]
    c = c_in.clone()
    worker.run(handle, [a, b, torch.zeros(n), c, op, variant])
    want = _k_order(a, b, c_in if op == 3 else None)
    assert torch.isnan(want).any() and torch.isinf(want).any() and (want.abs() < 2.0 ** -126).logical_and(want != 0).any()
    assert torch.equal(c.view(torch.int32), want.view(torch.int32))
    reverse = _k_order(a, b, c_in if op == 3 else None, ks=range(K - 1, -1, -1))
    assert not torch.equal(c.view(torch.int32), reverse.view(torch.int32))


@pytest.fixture(scope="module")
def cube_by_threads(tmp_path_factory):
    """The cube kernel (the build `cube` takes, from the compile cache) on a device of one tile thread
    and on one of two: get(threads) -> (worker, handle)."""
    inc = tmp_path_factory.mktemp("share")
    (inc / "cube_types.h").write_text(CUBE_TYPES)
    here = os.path.dirname(os.path.abspath(__file__))
    made = {}
    for threads in (1, 2):
        kept = os.environ.get("PFSIM_TILE_THREADS")
        os.environ["PFSIM_TILE_THREADS"] = str(threads)  # read by the device process at its start
        try:
            worker = pfsim.Worker()
        finally:
            if kept is None:
                del os.environ["PFSIM_TILE_THREADS"]
            else:
                os.environ["PFSIM_TILE_THREADS"] = kept
        made[threads] = (worker, worker.register(pfsim.Callable(
            orchestration=os.path.join(here, "kernels/orchestration/cube_ops_orch.cpp"),
            incores=[{"func_id": 0, "source": os.path.join(here, "kernels/aic/kernel_cube_ops.cpp"), "core_type": "aic"}],
            include_dirs=[str(inc)])))
    yield made.get
    for worker, _ in made.values():
        worker.close()


@pytest.mark.parametrize("m, n", SHARE_SHAPES)
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32, torch.int8], ids=lambda d: str(d).split(".")[-1])
@pytest.mark.parametrize("form", ["TMATMUL", "TMATMUL+TMATMUL_ACC", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"])
def test_matmul_on_two_threads_is_one_threads_bit_for_bit(cube_by_threads, dtype, form, m, n):
    """Rows summed on the helper thread give the bytes and the simulated time one thread gives, on
    products below, at and above kMatmulShareMacs, odd row counts included; the shared products equal
    the k-order sum too. Negative control: a helper that skips the last block of each piece it takes, or
    starts its pieces one row late, fails it."""
    assert (m * n * K >= SHARE_MACS) == ((m, n) != (127, 64))
    a, b, bias, c_in = _operands(dtype, m, n, torch.Generator().manual_seed(m * n))
    op = ["TMATMUL", "TMATMUL+TMATMUL_ACC", "TMATMUL_BIAS", "TMATMUL_ACC(c, c_in, a, b)"].index(form)
    variant = VARIANTS.index((dtype, m, n))
    results = {}
    for threads in (1, 2):
        worker, handle = cube_by_threads(threads)
        for repeat in range(2):  # the second call finds the helper awake, the die's L2 warm
            c = c_in.clone()
            r = worker.run(handle, [a, b, bias, c, op, variant])
            results[threads, repeat] = (c, r.time_ns)
    one, _ = results[1, 0]
    for (threads, repeat), (c, time_ns) in results.items():
        assert torch.equal(c.view(torch.int32), one.view(torch.int32)), (threads, repeat)
        assert time_ns == results[1, repeat][1], (threads, repeat)  # each device's die as the other's
    if dtype == torch.float32 and op in (0, 2, 3):
        want = _k_order(a, b, c_in if op == 3 else None, bias if op == 2 else None)
        assert torch.equal(one, want)

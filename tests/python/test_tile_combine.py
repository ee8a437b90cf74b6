"""The instructions that combine tiles, against torch: TCONCAT (plain and
index forms), a row broadcast whose matrix operand is wider than the
destination, TROWEXPANDEXPDIF / TCOLEXPANDEXPDIF, and TSTORE with
AtomicType::AtomicAdd from several cores at once (the L2 adds; a plain TSTORE,
the negative control, loses all but one block's values)."""

import pytest
import torch

from conftest import per_type

R, C, BLOCKS = 8, 64, 4
CTYPES = {torch.float32: "float", torch.float16: "pto::half", torch.bfloat16: "pto::bfloat16_t",
          torch.int32: "int32_t", torch.int16: "int16_t", torch.int8: "int8_t"}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)
TRANSCENDENTAL_RTOL = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


@pytest.fixture(scope="module")
def workers(typed_kernels):
    """One build of the kernel for every element type of CTYPES, on one worker."""
    return per_type(typed_kernels, "kernels/orchestration/tile_combine_orch.cpp", "kernels/aiv/kernel_tile_combine.cpp", CTYPES, R, C)


def rand(dtype, *shape, seed=0, small=False):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        if small:  # integers: every order of adding them gives the same bits
            return torch.randint(-8, 8, shape, generator=g).to(dtype)
        return (torch.randn(*shape, generator=g) * 2).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(info.min, info.max, shape, generator=g, dtype=dtype)


def run(workers, dtype, op, blocks=1, parts=None, acc=None, seed=0):
    worker, handle, index = workers(dtype)
    a, b = rand(dtype, R, C, seed=seed), rand(dtype, R, C, seed=seed + 1)
    vr, vc = rand(dtype, R, seed=seed + 2), rand(dtype, C, seed=seed + 3)
    parts = parts if parts is not None else torch.zeros(blocks, R, C, dtype=dtype)
    acc = acc if acc is not None else torch.zeros(R, C, dtype=dtype)
    y, yi = torch.zeros(R, C, dtype=dtype), torch.zeros(R, 8, dtype=torch.int32)
    worker.run(handle, [a, b, vr, vc, parts, y, acc, yi, op, blocks, index])
    return a, b, vr, vc, y, acc, yi


def same_bits(x, y):
    return torch.equal(x.view(torch.int16), y.view(torch.int16)) if x.dtype in (torch.float16, torch.bfloat16) \
        else torch.equal(x, y)


@pytest.mark.parametrize("dtype", list(CTYPES), ids=lambda d: str(d).split(".")[-1])
def test_tconcat_puts_the_sources_side_by_side(workers, dtype):
    a, b, _, _, y, _, _ = run(workers, dtype, 0)
    assert same_bits(y, torch.cat([a[:, :24], b[:, :C - 24]], dim=1))


@pytest.mark.parametrize("dtype", (torch.float32, torch.float16, torch.int8), ids=lambda d: str(d).split(".")[-1])
def test_tconcat_index_forms_take_each_rows_counts_in_bytes(workers, dtype):
    a, b, _, _, y, _, yi = run(workers, dtype, 1)
    want = torch.stack([torch.cat([a[r, :8 + 4 * r], b[r, :C - 8 - 4 * r]]) for r in range(R)])
    assert same_bits(y, want)
    assert torch.equal(yi[:, 0], torch.full((R,), C * torch.tensor([], dtype=dtype).element_size(), dtype=torch.int32))  # the six-operand form's sums


@pytest.mark.parametrize("dtype", FLOATS + (torch.int32,), ids=lambda d: str(d).split(".")[-1])
def test_a_row_broadcast_takes_a_wider_matrix_operand(workers, dtype):
    a, _, vr, _, y, _, _ = run(workers, dtype, 2)
    wide = torch.float32 if dtype.is_floating_point else torch.int64
    assert same_bits(y[:, :48], (a[:, :48].to(wide) * vr[:, None].to(wide)).to(dtype))
    assert not y[:, 48:].any()  # the columns past the destination's are not written


@pytest.mark.parametrize("op, axis", [(3, "row"), (4, "column")], ids=["TROWEXPANDEXPDIF", "TCOLEXPANDEXPDIF"])
@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: str(d).split(".")[-1])
def test_expdif_is_exp_of_the_difference(workers, dtype, op, axis):
    a, _, vr, vc, y, _, _ = run(workers, dtype, op)
    s = vr[:, None] if axis == "row" else vc[None, :]
    want = torch.exp(a.float() - s.float()).to(dtype)
    torch.testing.assert_close(y.float(), want.float(), rtol=TRANSCENDENTAL_RTOL[dtype], atol=0)


@pytest.mark.parametrize("dtype", list(CTYPES), ids=lambda d: str(d).split(".")[-1])
def test_atomic_add_stores_from_four_cores_sum_in_gm(workers, dtype):
    parts = torch.stack([rand(dtype, R, C, seed=10 + k, small=True) for k in range(BLOCKS)])
    acc0 = rand(dtype, R, C, seed=9, small=True)
    *_, acc, _ = run(workers, dtype, 5, blocks=BLOCKS, parts=parts, acc=acc0.clone())
    if dtype.is_floating_point:
        want = (acc0.float() + parts.float().sum(dim=0)).to(dtype)
    else:  # integers wrap
        want = (acc0.to(torch.int64) + parts.to(torch.int64).sum(dim=0)).to(dtype)
    assert same_bits(acc, want)


@pytest.mark.parametrize("dtype", FLOATS, ids=lambda d: str(d).split(".")[-1])
def test_one_atomic_add_rounds_once_to_the_element_type(workers, dtype):
    parts = rand(dtype, 1, R, C, seed=21)
    acc0 = rand(dtype, R, C, seed=22)
    *_, acc, _ = run(workers, dtype, 5, parts=parts, acc=acc0.clone())
    assert same_bits(acc, (acc0.float() + parts[0].float()).to(dtype))
    assert same_bits(acc, acc0 + parts[0])  # torch adding in the type itself


def test_a_plain_store_from_four_cores_keeps_one_block(workers):
    """Negative control: without AtomicAdd each block overwrites the others."""
    parts = torch.stack([torch.full((R, C), float(k + 1)) for k in range(BLOCKS)])
    *_, acc, _ = run(workers, torch.float32, 6, blocks=BLOCKS, parts=parts, acc=torch.zeros(R, C))
    assert not torch.equal(acc, parts.sum(dim=0))
    assert any(torch.equal(acc, parts[k]) for k in range(BLOCKS))

"""TSORT32, TMRGSORT (single list, two lists, exhausted) and the mask-pattern
TGATHER that takes a sorted list apart, against torch.sort, for float and half.
Pairs are 8 bytes: the value (a half padded to 4 bytes), then its uint32 index."""

import pytest
import torch

N = 256
CTYPES = {torch.float32: "float", torch.float16: "pto::half"}


@pytest.fixture(scope="module")
def sorter(typed_kernels):
    return lambda dtype: typed_kernels("kernels/orchestration/sort_orch.cpp", "kernels/aiv/kernel_sort.cpp", "aiv",
                                       "tile_ops_type.h", f"#pragma once\nusing T = {CTYPES[dtype]};\nconstexpr int N = {N};\n")


def run(sorter, dtype, x):
    worker, handle = sorter(dtype)
    pe = 8 // torch.tensor([], dtype=dtype).element_size()
    idx = torch.arange(1000, 1000 + N, dtype=torch.int32)  # uint32 on the device
    outs = [torch.zeros(N * pe, dtype=dtype) for _ in range(4)]
    vals = torch.zeros(N, dtype=dtype)
    inds = torch.zeros(N, dtype=torch.int32 if dtype == torch.float32 else torch.int16)
    counts = torch.zeros(8, dtype=torch.int32)
    worker.run(handle, [x, idx, *outs, vals, inds, counts])
    return [pairs(o, dtype) for o in outs], vals, inds, counts, idx


def pairs(t, dtype):
    """(values, indices) of a tile of pairs."""
    raw = t.view(torch.int32).view(-1, 2)  # 8 bytes a pair
    first = raw[:, 0].contiguous()
    values = first.view(torch.float32) if dtype == torch.float32 else first.view(torch.float16).view(-1, 2)[:, 0]
    return values, raw[:, 1].contiguous()


def sorted_like_the_board(x, idx):
    """Descending by value, equal values by smaller index first."""
    order = sorted(range(len(x)), key=lambda k: (-float(x[k]), int(idx[k])))
    return x[order], idx[order]


def distinct(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    return (torch.randperm(N, generator=g).float() / 4 - 20).to(dtype)  # distinct, exact in half


@pytest.mark.parametrize("dtype", list(CTYPES), ids=lambda d: str(d).split(".")[-1])
def test_sort32_then_merges_sort_like_torch(sorter, dtype):
    x = distinct(dtype, 1)
    (s32, m1, m2, _), *_ , idx = run(sorter, dtype, x)
    for b in range(N // 32):  # TSORT32: each block on its own
        want_v, want_i = sorted_like_the_board(x[32 * b:32 * b + 32], idx[32 * b:32 * b + 32])
        assert torch.equal(s32[0][32 * b:32 * b + 32], want_v) and torch.equal(s32[1][32 * b:32 * b + 32], want_i)
    for g in range(2):  # single-list TMRGSORT: groups of four blocks
        want_v, want_i = sorted_like_the_board(x[128 * g:128 * g + 128], idx[128 * g:128 * g + 128])
        assert torch.equal(m1[0][128 * g:128 * g + 128], want_v) and torch.equal(m1[1][128 * g:128 * g + 128], want_i)
    want_v, want_i = sorted_like_the_board(x, idx)  # two lists merged: everything
    assert torch.equal(m2[0], want_v) and torch.equal(m2[1], want_i)
    assert torch.equal(torch.sort(x.float(), descending=True).values.to(dtype), m2[0])


@pytest.mark.parametrize("dtype", list(CTYPES), ids=lambda d: str(d).split(".")[-1])
def test_equal_values_keep_the_smaller_index_first(sorter, dtype):
    x = (torch.arange(N) % 5).to(dtype)  # many ties
    (s32, _, m2, _), *_, idx = run(sorter, dtype, x)
    want_v, want_i = sorted_like_the_board(x, idx)
    assert torch.equal(m2[0], want_v) and torch.equal(m2[1], want_i)


@pytest.mark.parametrize("dtype", list(CTYPES), ids=lambda d: str(d).split(".")[-1])
def test_the_exhausted_merge_stops_when_one_list_runs_out(sorter, dtype):
    x = distinct(dtype, 2)
    x[:N // 2] += 100  # the first half's values all beat the second's: it runs out first
    (_, _, m2, m3), _, _, counts, idx = run(sorter, dtype, x)
    assert counts.tolist() == [N // 2, 0, 0, 0, N // 2, N // 2, 0, 0]
    assert torch.equal(m3[0][:N // 2], m2[0][:N // 2]) and torch.equal(m3[1][:N // 2], m2[1][:N // 2])
    y = distinct(dtype, 3)  # interleaved halves: the merge stops somewhere inside
    (_, _, m2, m3), _, _, counts, _ = run(sorter, dtype, y)
    taken = counts[0] + counts[1]
    assert N // 2 <= taken < N and N // 2 in (counts[0], counts[1])
    assert torch.equal(m3[0][:taken], m2[0][:taken])


@pytest.mark.parametrize("dtype", list(CTYPES), ids=lambda d: str(d).split(".")[-1])
def test_mask_pattern_gather_takes_the_pairs_apart(sorter, dtype):
    x = distinct(dtype, 4)
    (_, _, m2, _), vals, inds, _, idx = run(sorter, dtype, x)
    assert torch.equal(vals, m2[0])
    assert torch.equal(inds.to(torch.int32), m2[1])  # below 65536: the low half is the index


def test_a_misplaced_index_is_caught(sorter):
    """Negative control: the comparison fails when two neighbours swap."""
    x = distinct(torch.float32, 1)
    (_, _, m2, _), *_, idx = run(sorter, torch.float32, x)
    want_v, want_i = sorted_like_the_board(x, idx)
    want_i = want_i.clone()
    want_i[[0, 1]] = want_i[[1, 0]]
    assert not torch.equal(m2[1], want_i)

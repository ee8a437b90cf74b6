"""The compare form of TGATHER (top-k style index selection) against a plain
Python model of what a2a3's implementation does: the flat indices of a row's
elements above (GT) or equal to (EQ) its threshold, the per-row counts, dst's
other elements left as they were, and the thresholds converted as a2a3
converts them (int32 -> float; int16 -> half, so a 32-bit threshold tile
feeds a half source its 16-bit halves)."""

import pytest
import torch

import pfsim

CTYPES = {torch.float32: "float", torch.float16: "pto::half", torch.int32: "int32_t"}
KTYPES = {torch.int32: "uint32_t", torch.int16: "uint16_t"}


# (dtype, ktype, rows, cols, k, mode): the shapes of PTO-ISA's own a2a3 tests first.
SHAPES = [
    (torch.float32, torch.int32, 16, 64, 32, "GT"),
    (torch.float32, torch.int32, 4, 256, 64, "EQ"),
    (torch.int32, torch.int32, 8, 128, 64, "EQ"),
    (torch.float16, torch.int16, 2, 256, 32, "GT"),
    (torch.float16, torch.int16, 8, 128, 32, "EQ"),
]
# Every gather below, (shape, tmp_short): the shapes, a half source with 32-bit thresholds, a short scratch.
VARIANTS = [(v, False) for v in SHAPES] + [((torch.float16, torch.int32, 2, 128, 128, "GT"), False), (SHAPES[0], True)]


def kr_of(rows, ktype):
    return max(rows, 32 // torch.tensor([], dtype=ktype).element_size())


@pytest.fixture(scope="module")
def gather(typed_kernels):
    """One build of the gather kernel with every variant of VARIANTS, on one worker:
    get(dtype, ktype, rows, cols, k, mode, tmp_short) -> ((worker, handle, the variant's index), kr)."""
    variants = " ".join(f"X({i}, {CTYPES[d]}, {KTYPES[kt]}, {rows}, {cols}, {k}, {kr_of(rows, kt)}, "
                        f"{'true' if short else 'false'}, pto::CmpMode::{mode})"
                        for i, ((d, kt, rows, cols, k, mode), short) in enumerate(VARIANTS))
    worker, handle = typed_kernels("kernels/orchestration/gather_cmp_orch.cpp", "kernels/aiv/kernel_gather_cmp.cpp", "aiv",
                                   "gather_cmp_type.h", f"#pragma once\n#define GATHER_VARIANTS(X) {variants}\n")

    def get(dtype, ktype, rows, cols, k, mode, tmp_short=False):
        index = VARIANTS.index(((dtype, ktype, rows, cols, k, mode), tmp_short))
        return (worker, handle, index), kr_of(rows, ktype)
    return get


def expected(src, thresholds, k, mode, offset):
    """dst (flat, from -1) and counts as a2a3 leaves them."""
    rows, cols = src.shape
    dst = [-1] * (rows * k)
    counts = []
    for i in range(rows):
        hits = [j for j in range(cols) if (src[i, j] > thresholds[i] if mode == "GT" else src[i, j] == thresholds[i])]
        for n, j in enumerate(hits):
            dst[i * k + n] = offset + i * cols + j
        counts.append(len(hits))
    return torch.tensor(dst, dtype=torch.int32).reshape(rows, k), counts


def run(gather, dtype, ktype, src, kvals, k, mode, offset):
    (worker, handle, index), kr = gather(dtype, ktype, src.shape[0], src.shape[1], k, mode)
    kt = torch.zeros(kr, dtype=ktype)
    kt[:len(kvals)] = torch.tensor(kvals, dtype=ktype)
    dst = torch.full((src.shape[0], k), -1, dtype=torch.int32)
    counts = torch.full((kr,), -7, dtype=torch.int32)
    worker.run(handle, [src, kt, dst, counts, offset, index])
    return dst, counts, kt


def values(dtype, shape, seed):
    g = torch.Generator().manual_seed(seed)
    return torch.randint(0, 100, shape, generator=g).to(dtype)  # small integers: exact in every type


@pytest.mark.parametrize("dtype, ktype, rows, cols, k, mode", SHAPES, ids=lambda v: str(v).split(".")[-1])
def test_compare_gather_selects_the_indices_and_counts_like_a2a3(gather, dtype, ktype, rows, cols, k, mode):
    src = values(dtype, (rows, cols), rows * cols)
    if mode == "GT":  # the k-th largest of each row as its threshold: at most k - 1 above it
        kvals = [int(torch.sort(src[i].float(), descending=True).values[k - 1]) for i in range(rows)]
    else:
        kvals = [int(src[i, (7 * i) % cols]) for i in range(rows)]
    for offset in (0, 1000):
        dst, counts, _ = run(gather, dtype, ktype, src, kvals, k, mode, offset)
        want, want_counts = expected(src.float(), [float(v) for v in kvals], k, mode, offset)
        assert torch.equal(dst, want)
        assert counts[:rows].tolist() == want_counts and all(c > 0 for c in want_counts)
        assert counts[rows:].tolist() == [-7] * (len(counts) - rows)


def test_a_half_source_reads_a_32_bit_threshold_tile_by_its_16_bit_halves(gather):
    """a2a3 converts the thresholds with an int16 -> half conversion whatever
    the k tile's type: with uint32 thresholds [40, 60], row 0 compares with 40
    and row 1 with 0 (the high half of 40)."""
    src = values(torch.float16, (2, 128), 5)
    dst, counts, kt = run(gather, torch.float16, torch.int32, src, [40, 60], 128, "GT", 0)
    halves = kt.view(torch.int16)
    want, want_counts = expected(src.float(), [float(halves[0]), float(halves[1])], 128, "GT", 0)
    assert float(halves[1]) == 0.0
    assert torch.equal(dst, want) and counts[:2].tolist() == want_counts


def test_a_row_with_more_matches_than_dst_has_columns_runs_into_the_next_row(gather):
    src = values(torch.float32, (16, 64), 3)
    kvals = [-1] + [int(torch.sort(src[i], descending=True).values[20]) for i in range(1, 16)]  # row 0: all 64
    dst, counts, _ = run(gather, torch.float32, torch.int32, src, kvals, 32, "GT", 0)
    flat = [-1] * (16 * 32)
    for i in range(16):  # the rows' writes in order, each from its row's start
        hits = [i * 64 + j for j in range(64) if src[i, j] > kvals[i]]
        flat[i * 32:i * 32 + len(hits)] = hits
    assert dst.flatten().tolist() == flat[:16 * 32]
    assert counts[0] == 64 and dst[1, 20:].tolist() == list(range(52, 64))  # row 0's tail, not rewritten by row 1


def test_matches_past_the_end_of_dst_and_a_short_scratch_are_run_errors(gather):
    src = values(torch.float32, (16, 64), 4)
    with pytest.raises(pfsim.RunError, match=r"kernel_gather_cmp\.cpp:\d+: TGATHER: a row's matches run past the end of dst"):
        run(gather, torch.float32, torch.int32, src, [50] * 15 + [-1], 32, "GT", 0)
    (worker, handle, index), kr = gather(torch.float32, torch.int32, 16, 64, 32, "GT", tmp_short=True)
    with pytest.raises(pfsim.RunError, match=r"kernel_gather_cmp\.cpp:\d+: .*exceeds the 192 KiB UB"):
        worker.run(handle, [src, torch.zeros(kr, dtype=torch.int32), torch.zeros(16, 32, dtype=torch.int32),
                            torch.zeros(kr, dtype=torch.int32), 0, index])

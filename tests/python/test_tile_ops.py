"""The vector tile instructions against torch, on random inputs, for every
element type each takes: exact where the hardware is exact (moves, integer
ops, max/min, +, -, *, / and sqrt rounded once to the element type), within
the tolerance docs/kernels.md states for exp, log, rsqrt and reciprocal."""

import os
import struct

import pytest
import torch

import pfsim
from conftest import per_type

HERE = os.path.dirname(os.path.abspath(__file__))
R, C = 8, 64
CTYPES = {torch.float32: "float", torch.float16: "pto::half", torch.bfloat16: "pto::bfloat16_t",
          torch.int32: "int32_t", torch.int16: "int16_t"}
FLOATS = (torch.float32, torch.float16, torch.bfloat16)

# op id -> (name, reference(a, b, vr, vc, s) -> (output name, value), float only, tolerance class)
OPS = {
    0: ("TADD", lambda a, b, vr, vc, s: ("y", a + b), False, "exact"),
    1: ("TSUB", lambda a, b, vr, vc, s: ("y", a - b), False, "exact"),
    2: ("TMUL", lambda a, b, vr, vc, s: ("y", a * b), False, "exact"),
    3: ("TDIV", lambda a, b, vr, vc, s: ("y", a / b), True, "exact"),
    4: ("TMAX", lambda a, b, vr, vc, s: ("y", torch.maximum(a, b)), False, "exact"),
    5: ("TMIN", lambda a, b, vr, vc, s: ("y", torch.minimum(a, b)), False, "exact"),
    10: ("TADDS", lambda a, b, vr, vc, s: ("y", a + s), False, "exact"),
    11: ("TSUBS", lambda a, b, vr, vc, s: ("y", a - s), False, "exact"),
    12: ("TMULS", lambda a, b, vr, vc, s: ("y", a * s), False, "exact"),
    13: ("TDIVS", lambda a, b, vr, vc, s: ("y", a / s), True, "exact"),
    14: ("TMAXS", lambda a, b, vr, vc, s: ("y", torch.maximum(a, torch.full_like(a, s))), False, "exact"),
    15: ("TMINS", lambda a, b, vr, vc, s: ("y", torch.minimum(a, torch.full_like(a, s))), False, "exact"),
    16: ("TDIVS (scalar first)", lambda a, b, vr, vc, s: ("y", torch.full_like(a, s) / a), True, "exact"),
    20: ("TEXP", lambda a, b, vr, vc, s: ("y", torch.exp(a)), True, "transcendental"),
    21: ("TLOG", lambda a, b, vr, vc, s: ("y", torch.log(a.abs())), True, "transcendental"),
    # in float64, then rounded once: torch 2.13's float32 sqrt on the CPU is 1 ulp off in ~17 % of elements
    22: ("TSQRT", lambda a, b, vr, vc, s: ("y", torch.sqrt(a.abs().double()).to(a.dtype)), True, "exact"),
    23: ("TRSQRT", lambda a, b, vr, vc, s: ("y", torch.rsqrt(a.abs())), True, "transcendental"),
    24: ("TRECIP", lambda a, b, vr, vc, s: ("y", torch.reciprocal(a)), True, "exact"),
    25: ("TABS", lambda a, b, vr, vc, s: ("y", a.abs()), False, "exact"),
    26: ("TNEG", lambda a, b, vr, vc, s: ("y", -a), False, "exact"),
    27: ("TRELU", lambda a, b, vr, vc, s: ("y", torch.relu(a)), False, "exact"),
    30: ("TEXPANDS", lambda a, b, vr, vc, s: ("y", torch.full_like(a, s)), False, "exact"),
    31: ("TMOV", lambda a, b, vr, vc, s: ("y", a.clone()), False, "exact"),
    40: ("TROWSUM", lambda a, b, vr, vc, s: ("yr", row_fold(a, torch.add)), False, "exact"),
    41: ("TROWMAX", lambda a, b, vr, vc, s: ("yr", a.amax(dim=1)), False, "exact"),
    42: ("TROWMIN", lambda a, b, vr, vc, s: ("yr", a.amin(dim=1)), False, "exact"),
    45: ("TCOLSUM", lambda a, b, vr, vc, s: ("yc", row_fold(a.t(), torch.add)), False, "exact"),
    46: ("TCOLMAX", lambda a, b, vr, vc, s: ("yc", a.amax(dim=0)), False, "exact"),
    47: ("TCOLMIN", lambda a, b, vr, vc, s: ("yc", a.amin(dim=0)), False, "exact"),
    50: ("TROWEXPANDADD", lambda a, b, vr, vc, s: ("y", a + vr[:, None]), False, "exact"),
    51: ("TROWEXPANDSUB", lambda a, b, vr, vc, s: ("y", a - vr[:, None]), False, "exact"),
    52: ("TROWEXPANDMUL", lambda a, b, vr, vc, s: ("y", a * vr[:, None]), False, "exact"),
    53: ("TROWEXPANDDIV", lambda a, b, vr, vc, s: ("y", a / vr[:, None]), True, "exact"),
    54: ("TROWEXPANDMAX", lambda a, b, vr, vc, s: ("y", torch.maximum(a, vr[:, None])), False, "exact"),
    55: ("TROWEXPANDMIN", lambda a, b, vr, vc, s: ("y", torch.minimum(a, vr[:, None])), False, "exact"),
    56: ("TROWEXPAND", lambda a, b, vr, vc, s: ("y", vr[:, None].expand(R, C).clone()), False, "exact"),
    57: ("TROWEXPANDSUB (per-row first)", lambda a, b, vr, vc, s: ("y", vr[:, None] - a), False, "exact"),
    60: ("TCOLEXPANDADD", lambda a, b, vr, vc, s: ("y", a + vc[None, :]), False, "exact"),
    61: ("TCOLEXPANDSUB", lambda a, b, vr, vc, s: ("y", a - vc[None, :]), False, "exact"),
    62: ("TCOLEXPANDMUL", lambda a, b, vr, vc, s: ("y", a * vc[None, :]), False, "exact"),
    63: ("TCOLEXPANDDIV", lambda a, b, vr, vc, s: ("y", a / vc[None, :]), True, "exact"),
    64: ("TCOLEXPANDMAX", lambda a, b, vr, vc, s: ("y", torch.maximum(a, vc[None, :])), False, "exact"),
    65: ("TCOLEXPANDMIN", lambda a, b, vr, vc, s: ("y", torch.minimum(a, vc[None, :])), False, "exact"),
    66: ("TCOLEXPAND", lambda a, b, vr, vc, s: ("y", vc[None, :].expand(R, C).clone()), False, "exact"),
}
# Relative tolerance of the transcendental ones against torch (float32 math, then rounded to the type).
TRANSCENDENTAL_RTOL = {torch.float32: 2e-6, torch.float16: 1e-3, torch.bfloat16: 8e-3}


def row_fold(x, op):
    """Row reduction in the compute type (float for float types, int64 for integers), from column 0 up."""
    acc = x[:, 0].to(torch.float32 if x.dtype.is_floating_point else torch.int64)
    for c in range(1, x.shape[1]):
        acc = op(acc, x[:, c].to(acc.dtype))
    return acc.to(x.dtype)


def reference(op, dtype, a, b, vr, vc, s):
    """torch's result in float32 (int64 for integers), rounded once to the element type."""
    wide = torch.float32 if dtype.is_floating_point else torch.int64
    name, fn, _, _ = OPS[op]
    if op in (40, 45):
        return fn(a, b, vr, vc, s)
    out, value = fn(a.to(wide), b.to(wide), vr.to(wide), vc.to(wide), s)
    return out, value.to(dtype)


def inputs(dtype, seed):
    g = torch.Generator().manual_seed(seed)
    if dtype.is_floating_point:
        def rnd(*shape):
            x = torch.randn(*shape, generator=g) * 4
            return torch.where(x.abs() < 0.25, x.sign() * 0.25 + x, x).to(dtype)  # away from 0 for / and log
        return rnd(R, C), rnd(R, C), rnd(R), rnd(C), 1.75
    info = torch.iinfo(dtype)
    lo, hi = max(info.min, -3000), min(info.max, 3000)
    return (torch.randint(lo, hi, (R, C), generator=g, dtype=dtype), torch.randint(lo, hi, (R, C), generator=g, dtype=dtype),
            torch.randint(lo, hi, (R,), generator=g, dtype=dtype), torch.randint(lo, hi, (C,), generator=g, dtype=dtype), 3)


@pytest.fixture(scope="module")
def workers(typed_kernels):
    """One build of the kernel for every element type of CTYPES, on one worker."""
    return per_type(typed_kernels, "kernels/orchestration/tile_ops_orch.cpp", "kernels/aiv/kernel_tile_ops.cpp", CTYPES, R, C)


def run_op(workers, dtype, op, seed=0):
    worker, handle, index = workers(dtype)
    a, b, vr, vc, s = inputs(dtype, seed)
    if op in (21, 22, 23):
        a = a.abs()
    y, yr, yc = torch.zeros(R, C, dtype=dtype), torch.zeros(R, dtype=dtype), torch.zeros(C, dtype=dtype)
    bits = struct.unpack("<I", struct.pack("<f", float(s)))[0]
    worker.run(handle, [a, b, vr, vc, y, yr, yc, a, op, bits, index])
    return {"y": y, "yr": yr, "yc": yc}, reference(op, dtype, a, b, vr, vc, s)


CASES = [(op, dtype) for op, (_, _, float_only, _) in OPS.items() for dtype in CTYPES
         if dtype.is_floating_point or not float_only]


@pytest.mark.parametrize("op, dtype", CASES, ids=[f"{OPS[o][0]}-{str(d).split('.')[-1]}" for o, d in CASES])
def test_instruction_matches_torch(workers, op, dtype):
    got, (out, want) = run_op(workers, dtype, op)
    actual = got[out]
    if OPS[op][3] == "transcendental":
        torch.testing.assert_close(actual.float(), want.float(), rtol=TRANSCENDENTAL_RTOL[dtype], atol=0)
    else:
        assert torch.equal(actual.view(torch.int16 if actual.element_size() == 2 else actual.dtype)
                           if dtype in (torch.float16, torch.bfloat16) else actual,
                           want.view(torch.int16) if dtype in (torch.float16, torch.bfloat16) else want), \
            f"{OPS[op][0]} {dtype}: largest difference {(actual.double() - want.double()).abs().max()}"


NATIVE = [(op, dtype) for op, (_, _, _, kind) in OPS.items() if kind == "exact" and op not in (40, 45)
          for dtype in (torch.float16, torch.bfloat16)]


@pytest.mark.parametrize("op, dtype", NATIVE, ids=[f"{OPS[o][0]}-{str(d).split('.')[-1]}" for o, d in NATIVE])
def test_half_and_bf16_match_torchs_own_ops_on_those_types(workers, op, dtype):
    """Independent of the float32-then-round reference: torch computing on the 16-bit type itself."""
    got, (out, _) = run_op(workers, dtype, op)
    a, b, vr, vc, s = inputs(dtype, 0)
    if op in (21, 22, 23):
        a = a.abs()
    try:
        _, native = OPS[op][1](a, b, vr, vc, s)
    except RuntimeError as e:  # torch 1.13 on the CPU lacks a few half kernels
        pytest.skip(str(e))
    assert torch.equal(got[out].view(torch.int16), native.to(dtype).view(torch.int16))


@pytest.fixture(scope="module")
def narrow_float(typed_kernels):
    """The same kernel on float tiles of 3 x 20: rows of two vectors of eight and four elements over."""
    return per_type(typed_kernels, "kernels/orchestration/tile_ops_orch.cpp", "kernels/aiv/kernel_tile_ops.cpp",
                    {torch.float32: "float"}, 3, 20)(torch.float32)


@pytest.mark.parametrize("op", [0, 1, 2, 3, 4, 5], ids=[OPS[o][0] for o in range(6)])
def test_float_binary_ops_bit_for_bit_on_special_values_and_a_ragged_row(narrow_float, op):
    """Each element one IEEE operation of the pair, rounded once (max and min: x > y ? x : y and
    x < y ? x : y), bit for bit: signed zeros, infinities, NaN, subnormals and the largest values,
    in the columns taken eight at a time and in those after them."""
    worker, handle, index = narrow_float
    special = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38,
               -3.4028235e38, 1.0, -1.0, 3.0, 0.1, -7.5]
    g = torch.Generator().manual_seed(op)
    pick = lambda: torch.tensor(special, dtype=torch.float32)[torch.randint(len(special), (3, 20), generator=g)]
    a, b = pick(), pick()
    b[a.isnan()] = 2.0  # a NaN against a number only: which of two NaNs' payloads comes out is the host's choice
    y = torch.zeros(3, 20)
    worker.run(handle, [a, b, torch.zeros(3), torch.zeros(20), y, torch.zeros(3), torch.zeros(20), a, op, 0, index])
    want = {0: a + b, 1: a - b, 2: a * b, 3: a / b, 4: torch.where(a > b, a, b), 5: torch.where(a < b, a, b)}[op]
    assert torch.equal(y.view(torch.int32), want.view(torch.int32)), f"{OPS[op][0]}: {y} where {want}"


def in_element_order(a, b, op, over_b):
    """y = op(a, b) one element after another, row by row, in float32, where y's rows are two
    elements longer than those of the operand whose bytes it lies on (b's if over_b, else a's):
    y(r, c) is that operand's (r, c + 2r), so some elements are read after a result landed there."""
    under, other = (b, a) if over_b else (a, b)
    ub = under.flatten().clone()
    fn = {0: torch.add, 1: torch.sub, 2: torch.mul, 3: torch.div, 4: torch.maximum, 5: torch.minimum}[op]
    y = torch.empty(R, C)
    for r in range(R):
        for c in range(C):
            x = ub[r * C + c]
            pair = (other[r, c], x) if over_b else (x, other[r, c])
            y[r, c] = fn(*pair)
            if r * (C + 2) + c < ub.numel():
                ub[r * (C + 2) + c] = y[r, c]
    return y


@pytest.mark.parametrize("over_b", [False, True], ids=["over-a", "over-b"])
@pytest.mark.parametrize("op", [0, 1, 2, 3, 4, 5], ids=[OPS[o][0] for o in range(6)])
def test_a_destination_partly_over_an_operand_reads_the_results_before_it(workers, op, over_b):
    """Element by element, as the instruction is defined: where the destination partly overlaps an
    operand, the float path must not take eight columns at a time (it would read an element before
    the result that lands on it). Negative control: without that check in for_valid_pair
    (include/pto/pfsim_tile_ops.hpp) each of these fails, its rows from 1 on differing."""
    worker, handle, index = workers(torch.float32)
    a, b, vr, vc, _ = inputs(torch.float32, op)
    y = torch.zeros(R, C)
    worker.run(handle, [a, b, vr, vc, y, torch.zeros(R), torch.zeros(C), a, 70 + 10 * over_b + op, 0, index])
    want = in_element_order(a, b, op, over_b)
    all_read_first = OPS[op][1](a, b, vr, vc, 0)[1]
    assert not torch.equal(want, all_read_first)  # the overlap changes the values: the case is not vacuous
    assert torch.equal(y, want), f"rows differing: {sorted(set((y != want).nonzero()[:, 0].tolist()))}"


def over_a_in_order(a, f):
    """y(r, c) = f(r, x) one element after another, row by row, in float32, where y lies on a's
    bytes with rows two elements longer (as in_element_order lays it): x is a's (r, c) as it is then."""
    ub = a.flatten().clone()
    y = torch.empty(R, C)
    for r in range(R):
        for c in range(C):
            y[r, c] = f(r, ub[r * C + c])
            if r * (C + 2) + c < ub.numel():
                ub[r * (C + 2) + c] = y[r, c]
    return y


def row_sums_over_row_1(a):
    """TROWSUM from column 0 up, row by row, into a column that lies on a's row 1."""
    ub = a.flatten().clone()
    out = torch.empty(R)
    for r in range(R):
        acc = ub[r * C]
        for c in range(1, C):
            acc = acc + ub[r * C + c]
        out[r] = ub[C + r] = acc
    return out


@pytest.mark.parametrize("op", [90, 91, 92, 93], ids=["TADDS", "TNEG", "TROWEXPANDMUL", "TROWSUM"])
def test_one_operand_instructions_over_their_operand_read_in_element_order(workers, op):
    """As the binary ones: a destination partly over the operand takes the element-by-element
    path (the float paths through plain pointers, kLanes columns or eight rows at a time, would
    read elements after the results that land on them). Negative control: without the overlap
    check in for_valid_map, row_expand or row_reduce (include/pto/pfsim_tile_ops.hpp) its test fails."""
    worker, handle, index = workers(torch.float32)
    a, _, vr, _, _ = inputs(torch.float32, op)
    y, yr = torch.zeros(R, C), torch.zeros(R)
    worker.run(handle, [a, a, vr, torch.zeros(C), y, yr, torch.zeros(C), a, op, 0, index])
    if op == 93:
        got, want, all_read_first = yr, row_sums_over_row_1(a), row_fold(a, torch.add)
    else:
        f = {90: lambda r, x: x + 1.75, 91: lambda r, x: -x, 92: lambda r, x: x * vr[r]}[op]
        got, want = y, over_a_in_order(a, f)
        all_read_first = {90: a + 1.75, 91: -a, 92: a * vr[:, None]}[op]
    assert not torch.equal(want, all_read_first)  # the overlap changes the values: the case is not vacuous
    assert torch.equal(got, want), f"differing at {(got != want).nonzero()[:4].tolist()}"


@pytest.fixture(scope="module")
def ragged_float(typed_kernels):
    """The same kernel on float tiles of 11 x 20: a block of eight rows and three over, rows of
    two vectors of eight and four elements over."""
    return per_type(typed_kernels, "kernels/orchestration/tile_ops_orch.cpp", "kernels/aiv/kernel_tile_ops.cpp",
                    {torch.float32: "float"}, 11, 20)(torch.float32)


def where_fold(x, pick):
    """A row fold from column 0 up: acc = pick(b, acc) ? b : acc."""
    acc = x[:, 0].clone()
    for c in range(1, x.shape[1]):
        acc = torch.where(pick(x[:, c], acc), x[:, c], acc)
    return acc


LANE_OPS = {  # op -> (output, reference(a, vr, s)) with the model's comparisons, bit for bit
    10: ("y", lambda a, vr, s: a + s), 11: ("y", lambda a, vr, s: a - s), 12: ("y", lambda a, vr, s: a * s),
    13: ("y", lambda a, vr, s: a / s), 14: ("y", lambda a, vr, s: torch.where(a > s, a, s)),
    15: ("y", lambda a, vr, s: torch.where(a < s, a, s)),
    16: ("y", lambda a, vr, s: s / a), 24: ("y", lambda a, vr, s: 1.0 / a),
    25: ("y", lambda a, vr, s: torch.where(a < 0, -a, a)), 26: ("y", lambda a, vr, s: -a),
    27: ("y", lambda a, vr, s: torch.where(a > 0, a, torch.zeros_like(a))),
    40: ("yr", lambda a, vr, s: row_fold(a, torch.add)), 41: ("yr", lambda a, vr, s: where_fold(a, torch.gt)),
    42: ("yr", lambda a, vr, s: where_fold(a, torch.lt)),
    50: ("y", lambda a, vr, s: a + vr[:, None]), 51: ("y", lambda a, vr, s: a - vr[:, None]),
    52: ("y", lambda a, vr, s: a * vr[:, None]), 53: ("y", lambda a, vr, s: a / vr[:, None]),
    54: ("y", lambda a, vr, s: torch.where(vr[:, None] > a, vr[:, None], a)),
    55: ("y", lambda a, vr, s: torch.where(vr[:, None] < a, vr[:, None], a)),
    57: ("y", lambda a, vr, s: vr[:, None] - a),
}


@pytest.mark.parametrize("op", list(LANE_OPS), ids=[OPS[o][0] for o in LANE_OPS])
def test_float_one_operand_paths_bit_for_bit_on_special_values_and_ragged_tiles(ragged_float, op):
    """Scalar, unary, row-reduction and row-broadcast instructions on float tiles, bit for bit, in
    the columns taken kLanes at a time and those after them, the rows taken eight at a time and
    those after them: each element one IEEE operation (max and min as comparisons), each row's
    fold from column 0 up."""
    worker, handle, index = ragged_float
    special = [0.0, -0.0, float("inf"), -float("inf"), float("nan"), 1e-45, -1e-45, 1.1754942e-38, 3.4028235e38,
               -3.4028235e38, 1.0, -1.0, 3.0, 0.1, -7.5]
    g = torch.Generator().manual_seed(op)
    pick = lambda *shape: torch.tensor(special, dtype=torch.float32)[torch.randint(len(special), shape, generator=g)]
    a, vr = pick(11, 20), pick(11)
    vr[vr.isnan()] = 2.0  # one NaN an operation at most: which of two payloads comes out is the host's choice
    if op in (40, 41, 42):  # finite rows, signed zeros and subnormals among them: no inf or NaN swamps a fold
        a = torch.where(a.isfinite() & (a.abs() < 1e38), a, torch.randn(11, 20, generator=g) * 4)
    s = 1.75
    y, yr = torch.zeros(11, 20), torch.zeros(11)
    bits = struct.unpack("<I", struct.pack("<f", s))[0]
    worker.run(handle, [a, a, vr, torch.zeros(20), y, yr, torch.zeros(20), a, op, bits, index])
    out, fn = LANE_OPS[op]
    got, want = {"y": y, "yr": yr}[out], fn(a, vr, torch.tensor(s, dtype=torch.float32))
    assert torch.equal(got.view(torch.int32), want.view(torch.int32)), f"{OPS[op][0]}: {got} where {want}"


def test_a_wrong_reference_is_caught(workers):
    """Negative control: the comparison fails on a value one ulp off."""
    got, (out, want) = run_op(workers, torch.float32, 0)
    nudged = want.clone()
    nudged[0, 0] = torch.nextafter(nudged[0, 0], torch.tensor(float("inf")))
    assert not torch.equal(got[out], nudged)


def test_pipes_overlap_as_the_flags_allow_and_no_more(byte_copy):
    """TLOAD -> TADD -> TSTORE over 32 chunks: with one buffer each chunk's three
    stages run one after another; with two, chunk c + 1 loads while chunk c is
    added and stored, so the kernel takes about its busiest pipe's time."""
    callable_ = pfsim.Callable(orchestration=byte_copy.orchestration,
                               incores=[{"func_id": 0, "source": os.path.join(HERE, "kernels/aiv/kernel_pipeline.cpp"),
                                         "core_type": "aiv"}], signature=byte_copy.signature)
    x = torch.randn(32 * 16 * 256)
    lanes = {}
    with pfsim.Worker() as worker:
        handle = worker.register(callable_)
        for buffers in (1, 1, 2):  # the first run warms L2 for both measured ones
            y = torch.zeros_like(x)
            r = worker.run(handle, [x, y, buffers])
            assert torch.equal(y, x + x)
            lanes[buffers] = (r.tasks[0].end_ns - r.tasks[0].start_ns, r.summary["lanes"])
    (single, busy1), (double, busy2) = lanes[1], lanes[2]
    stages = busy1["mte2_ns"] + busy1["vector_ns"] + busy1["mte3_ns"]
    assert single >= 0.95 * stages, (single, busy1)          # no overlap with one buffer
    assert double < 0.8 * single, (double, single)           # overlap with two
    assert double >= max(busy2["mte2_ns"], busy2["vector_ns"], busy2["mte3_ns"])  # never faster than the busiest pipe


def one_vector_kernel(byte_copy, source):
    """A worker with `source` (under kernels/aiv/) registered in the byte-copy
    orchestration: yields (worker, handle)."""
    callable_ = pfsim.Callable(orchestration=byte_copy.orchestration,
                               incores=[{"func_id": 0, "source": os.path.join(HERE, "kernels/aiv", source),
                                         "core_type": "aiv"}], signature=byte_copy.signature)
    with pfsim.Worker() as worker:
        yield worker, worker.register(callable_)


@pytest.fixture(scope="module")
def misc(byte_copy_module):
    yield from one_vector_kernel(byte_copy_module, "kernel_tile_misc.cpp")


def test_tci_counts_over_the_valid_region_row_by_row(misc):
    worker, handle = misc
    for case, sign in ((0, 1), (1, -1)):
        out = torch.zeros(8, 64, dtype=torch.int32)
        worker.run(handle, [torch.zeros(8, 64), out, case])
        want = torch.full((8, 64), -1, dtype=torch.int32)
        want[:6, :40] = 5 + sign * torch.arange(6 * 40, dtype=torch.int32).reshape(6, 40)
        assert torch.equal(out, want)


def test_tfillpad_pads_outside_the_valid_region(misc):
    worker, handle = misc
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 2])
    want = torch.full((8, 64), float("-inf"))
    want[:6, :40] = x[:6, :40]
    assert torch.equal(out, want)
    worker.run(handle, [x, out, 3])
    want = torch.zeros(8, 64)
    want[:6, :40] = x[:6, :40]
    assert torch.equal(out, want)


def test_treshape_is_a_view_of_the_same_bytes(misc):
    worker, handle = misc
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 4])
    assert torch.equal(out, x + 1)


def test_a_tile_instruction_under_a_partial_or_counter_mask_is_an_error_naming_its_line(misc):
    """PTO-ISA's tile instructions expect the normal mode and the full mask;
    under another, a2a3's result depends on each one's code path: an error,
    never a silently different value. With the full mask restored (what
    generated kernels do) the instruction runs."""
    worker, handle = misc
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 12])
    assert torch.equal(out, x + 1)
    for case, what in ((10, r"set to high 0x0, low 0xf"), (13, r"in counter mode")):
        with pytest.raises(pfsim.RunError, match=r"kernel_tile_misc\.cpp:\d+.*vector mask " + what):
            worker.run(handle, [x, torch.zeros(8, 64), case])
    worker.run(handle, [x, out, 12])  # the next kernel starts with the full mask again
    assert torch.equal(out, x + 1)


def test_one_dynamic_valid_size_and_scalar_element_access(misc):
    worker, handle = misc
    x = torch.randn(8, 64)
    out = torch.full((8, 64), -1.0)
    worker.run(handle, [x, out, 11])
    want = torch.zeros(8, 64)
    want[:, :40] = x[:, :40] + 1
    want[0, 0], want[0, 1] = 7.0, 2 * x[0, 1]
    assert torch.equal(out, want)


def test_layout_dn_global_tensors_are_column_major(misc):
    worker, handle = misc
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 5])  # out(r, c) = x's flat element c * 8 + r
    assert torch.equal(out, x.reshape(64, 8).t())
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 6])  # out's flat element c * 8 + r = x(r, c)
    assert torch.equal(out.reshape(64, 8), x.t())
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 7])  # a DN column of 16 into a column-vector tile
    assert torch.equal(out, x.reshape(-1)[64:72][:, None].expand(8, 64))


def test_ttrans_and_tgather(misc):
    worker, handle = misc
    x = torch.randn(8, 64)
    out = torch.zeros(8, 64)
    worker.run(handle, [x, out, 8])
    want = torch.zeros(8, 64)
    want[:, :8] = x[:, :8].t()
    assert torch.equal(out, want)
    idx = torch.randint(0, 8 * 64, (8, 64), generator=torch.Generator().manual_seed(5), dtype=torch.int32)
    out = idx.view(torch.float32).clone()
    worker.run(handle, [x, out, 9])
    assert torch.equal(out, x.reshape(-1)[idx.long()])


def to_nz(m, c0=16, gap=0):
    """`m` (rows x cols) in NZ order: 16 x c0 fractals, a column of fractals
    after another, each fractal followed by `gap` elements."""
    rows, cols = m.shape
    blocks = m.reshape(rows // 16, 16, cols // c0, c0).permute(2, 0, 1, 3).reshape(-1, 16 * c0)
    return torch.cat([blocks, torch.zeros(blocks.shape[0], gap, dtype=m.dtype)], 1).reshape(-1)


@pytest.fixture(scope="module")
def nz(byte_copy_module):
    yield from one_vector_kernel(byte_copy_module, "kernel_tile_nz.cpp")


def test_an_nz_global_tensor_moves_fractal_by_fractal(nz):
    """Layout::NZ: element (r, c) of the matrix is at fractal (c / 16, r / 16),
    row r % 16, column c % 16; loads and stores move exactly those elements,
    also over a partial valid region and with gaps between fractals."""
    worker, handle = nz
    m = torch.randn(32, 48).half()
    out = torch.zeros(32, 48, dtype=torch.half)
    worker.run(handle, [to_nz(m), out, 0])
    assert torch.equal(out, m)
    out = torch.zeros(32 * 48, dtype=torch.half)
    worker.run(handle, [m, out, 1])
    assert torch.equal(out, to_nz(m))
    out = torch.zeros(32, 48, dtype=torch.half)
    worker.run(handle, [to_nz(m), out, 2])
    want = torch.zeros(32, 48, dtype=torch.half)
    want[:20, :40] = m[:20, :40]
    assert torch.equal(out, want)
    gapped = to_nz(m, gap=16)
    assert gapped.numel() == 6 * 272
    out = torch.zeros(32, 48, dtype=torch.half)
    worker.run(handle, [gapped, out, 3])
    assert torch.equal(out, m)

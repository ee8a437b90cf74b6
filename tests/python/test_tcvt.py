"""TCVT against torch and an exact reference, for every conversion a2a3 has
that torch can hold, in every RoundMode: bit for bit."""

import math
import os
import struct

import numpy as np
import pytest
import torch

import pfsim

HERE = os.path.dirname(os.path.abspath(__file__))
R, C = 4, 64
CTYPE = {torch.float32: "float", torch.float16: "pto::half", torch.bfloat16: "pto::bfloat16_t", torch.int8: "int8_t",
         torch.uint8: "uint8_t", torch.int16: "int16_t", torch.int32: "int32_t", torch.int64: "int64_t"}
MODES = {"CAST_NONE": 0, "CAST_RINT": 1, "CAST_ROUND": 2, "CAST_FLOOR": 3, "CAST_CEIL": 4, "CAST_TRUNC": 5, "CAST_ODD": 6}
PAIRS = [(torch.float32, d) for d in (torch.float16, torch.bfloat16, torch.int16, torch.int32, torch.int64, torch.float32)]
PAIRS += [(torch.float16, d) for d in (torch.float32, torch.int32, torch.int16, torch.int8, torch.uint8)]
PAIRS += [(torch.bfloat16, torch.float32), (torch.bfloat16, torch.int32), (torch.int16, torch.float16),
          (torch.int16, torch.float32), (torch.int32, torch.float32), (torch.int32, torch.int16),
          (torch.int32, torch.int64), (torch.int32, torch.float16), (torch.int64, torch.float32),
          (torch.int64, torch.int32), (torch.uint8, torch.float16), (torch.int8, torch.float16)]


def name(t):
    return str(t).split(".")[-1]


def source(dtype):
    """Values that exercise rounding: ties, near-ties, out of range, signed zero, and (floats) inf and nan."""
    g = torch.Generator().manual_seed(1)
    n = R * C
    if dtype.is_floating_point:
        ties = torch.tensor([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 0.49999997, -0.50000006, 1e9, -1e9, 70000.0, -70000.0,
                             3.0e38, -0.0, float("inf"), float("-inf"), float("nan"), 65504.0, 65520.0, 6e-8, 3e-8,
                             1e-40, 127.5, -128.5, 255.5, 32767.5, -32768.5, 2.0 ** 31, -(2.0 ** 31) - 256])
        rest = torch.randn(n - len(ties), generator=g) * torch.pow(10, torch.randint(-3, 5, (n - len(ties),), generator=g).float())
        return torch.cat([ties, rest]).to(dtype).reshape(R, C)
    info = torch.iinfo(dtype)
    edge = torch.tensor([info.min, info.max, 0, -1, 1, 2 ** 24 + 1, -(2 ** 24) - 1, 70000, -70000, 16777217],
                        dtype=torch.int64).clamp(info.min, info.max)
    rest = torch.randint(info.min, info.max, (n - len(edge),), generator=g, dtype=torch.int64)
    return torch.cat([edge, rest]).to(dtype).reshape(R, C)


def neighbours_f16(x):
    """The float16 values just below and above each float32 x (x itself twice when exact)."""
    with np.errstate(over="ignore"):  # values beyond float16 become inf here on purpose
        h = x.astype(np.float16)
        back = h.astype(np.float32)
        lo = np.where(back > x, np.nextafter(h, np.float16(-np.inf)), h)
        hi = np.where(back < x, np.nextafter(h, np.float16(np.inf)), h)
    return lo, hi


def neighbours_bf16(x):
    bits = x.view(np.uint32)
    trunc = (bits & 0xFFFF0000).view(np.float32)  # toward zero
    away = np.where(trunc != x, ((bits & 0xFFFF0000) + 0x10000).view(np.float32), trunc)
    lo = np.where(x >= 0, trunc, away)
    hi = np.where(x >= 0, away, trunc)
    return lo, hi


def directed(x, mode, to):
    """float32 -> float16 / bfloat16 in a RoundMode other than to-nearest-even, exactly."""
    x = x.numpy().astype(np.float32)
    lo, hi = neighbours_f16(x) if to == torch.float16 else neighbours_bf16(x)
    lo, hi = lo.astype(np.float64), hi.astype(np.float64)
    xd = x.astype(np.float64)
    mid = (lo + hi) / 2
    pick = {
        "CAST_FLOOR": lo, "CAST_CEIL": hi,
        "CAST_TRUNC": np.where(xd >= 0, lo, hi),
        "CAST_ROUND": np.where(xd > mid, hi, np.where(xd < mid, lo, np.where(xd >= 0, hi, lo))),
    }
    if mode == "CAST_ODD":
        lo_t, hi_t = torch.tensor(lo).to(to), torch.tensor(hi).to(to)
        odd = (hi_t.view(torch.int16) & 1).bool()
        out = torch.where(torch.tensor(lo == hi), lo_t, torch.where(odd, hi_t, lo_t))
    else:
        out = torch.tensor(pick[mode]).to(to)
    finite_max = torch.finfo(to).max
    big = torch.tensor(np.abs(xd) > finite_max) & torch.tensor(np.isfinite(xd))
    toward_zero = {"CAST_TRUNC": True, "CAST_ODD": True, "CAST_FLOOR": False, "CAST_CEIL": False, "CAST_ROUND": False}[mode]
    pos = torch.tensor(xd > 0)
    sat = torch.where(pos, torch.tensor(finite_max), torch.tensor(-finite_max)).to(to)
    inf = torch.where(pos, torch.tensor(float("inf")), torch.tensor(float("-inf"))).to(to)
    if mode == "CAST_FLOOR":
        over = torch.where(pos, sat, inf)
    elif mode == "CAST_CEIL":
        over = torch.where(pos, inf, sat)
    else:
        over = sat if toward_zero else inf
    out = torch.where(big, over, out)
    out = torch.where(torch.tensor(np.isnan(xd)), torch.tensor(float("nan")).to(to), out)
    return torch.where(torch.tensor(np.isinf(xd)), torch.tensor(xd).to(to), out)


def round_float(x, mode):
    """float -> integral float64 in a RoundMode."""
    x = x.double()
    if mode == "CAST_RINT":
        return torch.round(x)  # half to even
    if mode == "CAST_ROUND":
        return torch.copysign(torch.floor(x.abs() + 0.5), x)
    if mode == "CAST_FLOOR":
        return torch.floor(x)
    if mode == "CAST_CEIL":
        return torch.ceil(x)
    return torch.trunc(x)  # CAST_NONE, CAST_TRUNC, CAST_ODD


def expected(src, to, mode, wrap):
    frm = src.dtype
    if frm == to == torch.float32:
        return round_float(src, mode).float() if mode in ("CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL",
                                                          "CAST_TRUNC") else src.clone()
    if to in (torch.float16, torch.bfloat16):
        x = src.float()
        if frm.is_floating_point and mode not in ("CAST_NONE", "CAST_RINT"):
            return directed(x, mode, to)
        if not frm.is_floating_point and mode not in ("CAST_NONE", "CAST_RINT"):
            return directed(x, mode, to)
        return x.to(to)
    if to.is_floating_point:
        return src.to(to)
    info = torch.iinfo(to)
    if frm.is_floating_point:
        r = round_float(src, mode)
        r = torch.where(r.isnan(), torch.zeros_like(r), r)
        if wrap:
            return r.clamp(-2 ** 31, 2 ** 31 - 1).to(torch.int64).to(torch.int32).to(to)
        big = r >= 2.0 ** 63  # beyond int64: saturate without the float64 -> int64 overflow
        return torch.where(big, torch.tensor(info.max), r.clamp(info.min, min(info.max, 2 ** 63 - 2 ** 10)).to(torch.int64)).to(to)
    x = src.to(torch.int64)
    return x.to(to) if wrap else x.clamp(info.min, info.max).to(to)


@pytest.fixture(scope="module")
def kernels(typed_kernels):
    """One build of the TCVT kernel with every conversion of PAIRS, on one worker:
    get(frm, to) -> (worker, handle, the conversion's index)."""
    pairs = " ".join(f"X({i}, {CTYPE[f]}, {CTYPE[t]})" for i, (f, t) in enumerate(PAIRS))
    worker, handle = typed_kernels("kernels/orchestration/tcvt_orch.cpp", "kernels/aiv/kernel_tcvt.cpp", "aiv",
                                   "tcvt_types.h", f"#pragma once\nconstexpr int R = {R}, C = {C};\n"
                                                   f"#define TCVT_PAIRS(X) {pairs}\n")
    return lambda frm, to: (worker, handle, PAIRS.index((frm, to)))


def modes_for(frm, to):
    if to in (torch.float16, torch.bfloat16) and frm == torch.float32:
        return list(MODES)
    if to.is_floating_point and frm != torch.float32:
        return ["CAST_NONE", "CAST_RINT"]
    if frm.is_floating_point:
        return ["CAST_NONE", "CAST_RINT", "CAST_ROUND", "CAST_FLOOR", "CAST_CEIL", "CAST_TRUNC"]
    return ["CAST_NONE"]


CASES = [(f, t, m, w) for f, t in PAIRS for m in modes_for(f, t)
         for w in ((False, True) if (f, t) in ((torch.float32, torch.int16), (torch.float16, torch.int16),
                                               (torch.float16, torch.int8)) else (False,))]


@pytest.mark.parametrize("frm, to, mode, wrap", CASES,
                         ids=[f"{name(f)}-{name(t)}-{m}{'-wrap' if w else ''}" for f, t, m, w in CASES])
def test_tcvt(kernels, frm, to, mode, wrap):
    worker, handle, index = kernels(frm, to)
    src = source(frm)
    dst = torch.zeros(R, C, dtype=to)
    worker.run(handle, [src, dst, MODES[mode], int(wrap), index])
    want = expected(src, to, mode, wrap)
    if to.is_floating_point:
        same = (dst == want) | (dst.isnan() & want.isnan())
        # -0.0 stays -0.0; a NaN's sign and payload are not compared (torch 1.13 makes bf16 NaN 0xFFFF)
        same &= (torch.signbit(dst) == torch.signbit(want)) | want.isnan()
    else:
        same = dst == want
    bad = (~same).nonzero()
    assert not len(bad), (f"{len(bad)} elements differ, first at {bad[0].tolist()}: "
                          f"{src[tuple(bad[0])].item()!r} -> {dst[tuple(bad[0])].item()!r}, "
                          f"expected {want[tuple(bad[0])].item()!r}")

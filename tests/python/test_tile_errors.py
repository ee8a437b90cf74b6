"""Bad tile instructions: a compile-time error where the types say it, else a
run-time error naming the instruction and the task, block and core; never a
wrong value silently."""

import pytest
import torch

import pfsim

PRELUDE = """#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
using V = Tile<TileType::Vec, float, 8, 64>;
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
"""


def kernel(tmp_path, byte_copy, body, core="aiv"):
    src = tmp_path / "k.cpp"
    src.write_text(PRELUDE + body + "\n}\n")
    return pfsim.Callable(**{**byte_copy.__dict__, "incores": [{"func_id": 0, "source": str(src), "core_type": core}]})


@pytest.mark.parametrize("body, message", [
    ("Tile<TileType::Vec, int32_t, 8, 64> a, b, c; TDIV(c, a, b);", "TDIV: float types only"),
    ("Tile<TileType::Vec, half, 8, 64> a; V b, c; TADD(c, a, b);", "TADD: the operands' element types differ"),
    ("Tile<TileType::Vec, int8_t, 8, 64> d; Tile<TileType::Vec, bfloat16_t, 8, 64> s; TCVT(d, s, RoundMode::CAST_RINT);",
     "TCVT: a2a3 has no conversion between these element types"),
    ("Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, 9, 64> t;", "valid rows exceed the tile"),
    ("TileLeft<half, 16, 16> a; TileRight<half, 16, 16> b; TileAcc<half, 16, 16> c; TMATMUL(c, a, b);",
     "the accumulator is float for half"),
    ("Tile<TileType::Vec, uint32_t, 8, 64> d; V s; Tile<TileType::Vec, uint32_t, 1, 8> k, c;"
     "Tile<TileType::Vec, uint8_t, 8, 32> t;"
     "TGATHER<decltype(d), V, decltype(k), decltype(c), decltype(t), CmpMode::LT>(d, s, k, c, t, 0);",
     r"TGATHER \(compare\): CmpMode::GT or CmpMode::EQ only"),
    ("V t; TLOAD(t, GlobalTensor<float, Shape<1, 1, 1, 16, 8>, Stride<128, 128, 128, 8, 1>, Layout::NZ>(nullptr));",
     "an NZ global tensor moves to or from an NZ tile"),
])
def test_what_the_types_say_is_a_compile_error(tmp_path, byte_copy, body, message):
    with pfsim.Worker() as worker, pytest.raises(pfsim.CompileError, match=message):
        worker.register(kernel(tmp_path, byte_copy, body))


@pytest.mark.parametrize("body, message", [
    ("V a, c; Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, -1, -1> b(4, 64);"
     "TASSIGN(a, 0); TASSIGN(b, 2048); TASSIGN(c, 4096); TADD(c, a, b);",
     "TADD: the operands' valid regions differ from the destination's"),
    ("Tile<TileType::Vec, float, 8, 64, BLayout::RowMajor, -1, -1> t(9, 64);", "Tile: dynamic valid size larger than the tile"),
    ("V a; TASSIGN(a, 16);", "tile at UB offset 0x10 is not 32-byte aligned"),
    ("V a; TASSIGN(a, 0); a.SetValue(512, 1.0f);", "SetValue: the offset lies outside the tile"),
    ("V a; TASSIGN(a, 191 * 1024);", "exceeds the 192 KiB UB"),
    ("V a, c; TASSIGN(a, 0); TASSIGN(c, 2048); Tile<TileType::Vec, float, 8, 32> d; TASSIGN(d, 4096);"
     "TEXTRACT(d, a, 4, 40);", "TEXTRACT: the part taken lies outside the source tile"),
    ("V a, c; TASSIGN(a, 0); TASSIGN(c, 2048); Tile<TileType::Vec, int32_t, 8, 64> i; TASSIGN(i, 4096);"
     "TEXPANDS(i, 512); TGATHER(c, a, i, a);", "TGATHER: an index lies outside the source tile"),
    ("V a; Tile<TileType::Vec, float, 64, 8> t; TASSIGN(a, 0); TASSIGN(t, 2048);"
     "Tile<TileType::Vec, float, 8, 8> s; TASSIGN(s, 4096); TTRANS(s, a, a);",
     "TTRANS: the destination's valid region is not the source's transposed"),
    ("Tile<TileType::Vec, float, 16, 16, BLayout::ColMajor, 16, 16, SLayout::RowMajor> t; TASSIGN(t, 0);"
     "TLOAD(t, GlobalTensor<float, Shape<1, 1, 1, 16, 16>, Stride<256, 256, 256, 16, 1>, Layout::NZ>(nullptr));",
     "TLOAD: an NZ global tensor's last two dimensions are one fractal: 16 rows of 32 bytes"),
])
def test_what_only_the_values_say_is_a_run_error_naming_the_instruction_and_the_core(tmp_path, byte_copy, body, message):
    out = torch.zeros(4)
    with pfsim.Worker() as worker:
        with pytest.raises(pfsim.RunError, match=r"task 0 \(aiv, func 0\) block 0 on die\.aiv0 \(.*k\.cpp\): "
                                                 r"k\.cpp:7: .*" + message):  # line 7: the body's
            worker.run(worker.register(kernel(tmp_path, byte_copy, body)), [torch.ones(4), out, 0])
    assert torch.equal(out, torch.zeros(4))  # the fault left the output as it was


def test_a_cube_instruction_on_a_vector_core_is_a_run_error(tmp_path, byte_copy):
    body = "TileLeft<half, 16, 16> a; TASSIGN(a, 0);"
    with pfsim.Worker() as worker, pytest.raises(pfsim.RunError, match="a vector core has no L0A buffer"):
        worker.run(worker.register(kernel(tmp_path, byte_copy, body)), [torch.ones(4), torch.zeros(4), 0])

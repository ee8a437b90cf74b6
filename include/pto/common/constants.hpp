// <pto/common/constants.hpp> as kernels include it: the instruction set, plus
// the a2a3 block sizes kernels size their tiles by.
#pragma once

#include "pto/pto-inst.hpp"

namespace pto {
constexpr int C0_SIZE_BYTE = 32;      // one C0 block (the innermost unit of a fractal)
constexpr int BLOCK_BYTE_SIZE = 32;   // one UB block
constexpr int BLOCK_LEN = 16;         // rows of a 16 x 16 cube fractal
constexpr int FRACTAL_NZ_ROW = 16;
constexpr int CUBE_BLOCK_SIZE = 512;  // bytes of one fractal
constexpr int REPEAT_BYTE = 256;      // bytes one vector repeat processes
}  // namespace pto

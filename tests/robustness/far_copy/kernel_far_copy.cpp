// Copies the 64 floats of args[0] around byte offset 4 GiB (elements 2^30 - 32
// to 2^30 + 32) into args[1][0..64) with one TLOAD and one TSTORE, and element
// 2^30 into args[1][64] with a scalar load and store: GM offsets past 32 bits
// on both of a kernel's paths.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

constexpr int64_t kFar = int64_t{1} << 30;  // the element at byte offset 4 GiB
using Row64 = GlobalTensor<float, Shape<1, 1, 1, 1, 64>, Stride<64, 64, 64, 64, 1>>;
using Row = Tile<TileType::Vec, float, 1, 64>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    Row row;
    TASSIGN(row, 0x100);
    TLOAD(row, Row64(src + kFar - 32));
    set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    TSTORE(Row64(dst), row);
    pipe_barrier(PIPE_ALL);
    dst[64] = src[kFar];
    dcci(dst + 64, SINGLE_CACHE_LINE);
    pipe_barrier(PIPE_ALL);
}

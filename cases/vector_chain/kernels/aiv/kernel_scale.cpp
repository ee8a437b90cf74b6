// out = x * s (s a float32 scalar), element-wise. Block b of n handles the
// b-th slice, in UB tiles of up to 2048 elements.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pipe_sync.h"

constexpr int kChunk = 2048;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* x = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const float s = from_u64<float>(static_cast<uint64_t>(args[2]));
    const int64_t n = static_cast<int64_t>(out->shapes[0]);
    const int64_t per = n / get_block_num(args);
    const int64_t first = get_block_idx(args) * per;
    __gm__ float* xs = reinterpret_cast<__gm__ float*>(x->buffer.addr) + x->start_offset + first;
    __gm__ float* os = reinterpret_cast<__gm__ float*>(out->buffer.addr) + out->start_offset + first;

    using Vec = Tile<TileType::Vec, float, 1, kChunk, BLayout::RowMajor, 1, DYNAMIC>;
    using G = GlobalTensor<float, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    for (int64_t at = 0; at < per; at += kChunk) {
        const int len = static_cast<int>(per - at < kChunk ? per - at : kChunk);
        Vec a(1, len);
        TASSIGN(a, 0x0);
        TLOAD(a, G(xs + at, G::Shape(len)));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TMULS(a, a, s);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(G(os + at, G::Shape(len)), a);
        set_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID1);
        wait_flag(PIPE_MTE3, PIPE_MTE2, EVENT_ID1);
    }
    pipe_sync();
}

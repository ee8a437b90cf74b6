// What the scene's kernels share: the window's layout (kElems floats of data,
// then the int32 signal) and the tensor types.
#pragma once

#include <cstdint>

#include <pto/pto-inst.hpp>

#include "platform_comm/comm_context.h"
#include "tensor.h"

namespace scene {
constexpr int kElems = 1024;
constexpr uint64_t kSignalOffset = kElems * sizeof(float);
using Flat = pto::GlobalTensor<float, pto::Shape<1, 1, 1, 1, kElems>, pto::Stride<kElems, kElems, kElems, kElems, 1>>;
using Signal = pto::GlobalTensor<int32_t, pto::Shape<1, 1, 1, 1, 1>, pto::Stride<1, 1, 1, 1, 1>>;

inline __gm__ uint8_t* window_of(__gm__ CommContext* ctx, uint32_t rank) {
    return reinterpret_cast<__gm__ uint8_t*>(ctx->windowsIn[rank]);
}
inline __gm__ float* data_of(__gm__ ChipTensor* t) {
    return reinterpret_cast<__gm__ float*>(t->buffer.addr) + t->start_offset;
}
// out = in + 1, kElems floats through UB.
inline void add_one(__gm__ float* in, __gm__ float* out) {
    using namespace pto;
    Tile<TileType::Vec, float, 1, kElems> t;
    TASSIGN(t, 0x0);
    Flat src(in), dst(out);
    TLOAD(t, src);
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    TADDS(t, t, 1.0f);
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(dst, t);
}
}  // namespace scene

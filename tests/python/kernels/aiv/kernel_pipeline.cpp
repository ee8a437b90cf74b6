// y = x + x over `chunks` 16 KiB chunks: TLOAD (MTE2) -> TADD (vector) ->
// TSTORE (MTE3), with one buffer (each stage waits for the previous chunk to
// be stored) or two (chunk c + 1 loads while chunk c is added and stored).
// args[2]: the number of buffers, 1 or 2.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

constexpr int kRows = 16, kCols = 256;
constexpr int64_t kChunk = kRows * kCols;
using Chunk = GlobalTensor<float, Shape<1, 1, 1, kRows, kCols>, Stride<1, 1, 1, kCols, 1>>;
using T = Tile<TileType::Vec, float, kRows, kCols>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const int64_t buffers = args[2];
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    const int64_t chunks = static_cast<int64_t>(in->numel()) / kChunk;
    T x[2], y[2];
    for (int i = 0; i < 2; ++i) {
        TASSIGN(x[i], i * T::kBytes);
        TASSIGN(y[i], (2 + i) * T::kBytes);
    }
    for (int64_t c = 0; c < chunks; ++c) {
        const int b = static_cast<int>(c % buffers);
        if (c >= buffers) wait_flag(PIPE_MTE3, PIPE_MTE2, b);  // buffer b's last chunk is stored
        TLOAD(x[b], Chunk(src + c * kChunk));
        set_flag(PIPE_MTE2, PIPE_V, b);
        wait_flag(PIPE_MTE2, PIPE_V, b);
        TADD(y[b], x[b], x[b]);
        set_flag(PIPE_V, PIPE_MTE3, b);
        wait_flag(PIPE_V, PIPE_MTE3, b);
        TSTORE(Chunk(dst + c * kChunk), y[b]);
        set_flag(PIPE_MTE3, PIPE_MTE2, b);
    }
    for (int64_t c = chunks > buffers ? chunks - buffers : 0; c < chunks; ++c) {
        wait_flag(PIPE_MTE3, PIPE_MTE2, static_cast<int>(c % buffers));
    }
    pipe_sync();
}

// One access one element past the end of a tensor, inside its allocation's
// 4 KiB rounding (the board reads or writes there without a fault), or its
// twin one element back, inside (args[3] != 0). args[0]: a 1000-float input
// (4000 bytes), args[1]: a 1000-float output, args[2]: which access (0 a
// scalar load, 1 a TLOAD, 2 a scalar store, 3 a TSTORE; 4 a scalar load of the
// element before args[0], which bounds_orch.cpp then makes a tensor starting
// 64 bytes into its allocation; its twin loads its first). The lines marked
// "site:" are what the sanitizer must name (tests/python/test_sanitizer.py).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

using namespace pto;

constexpr int64_t kElems = 1000;
using Eight = GlobalTensor<float, Shape<1, 1, 1, 1, 8>, Stride<8, 8, 8, 8, 1>>;
using Row = Tile<TileType::Vec, float, 1, 8>;

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    const int64_t access = args[2];
    const int64_t last = args[3] != 0 ? kElems - 1 : kElems;  // the element accessed: past the end, or the last
    Row row;
    TASSIGN(row, 0x100);
    switch (access) {
        case 0: {
            volatile float value = src[last];  // site: load
            (void)value;
            break;
        }
        case 1:
            TLOAD(row, Eight(src + last - 7));  // site: tload
            break;
        case 2:
            dst[last] = 1.0f;  // site: store
            dcci(dst + last, SINGLE_CACHE_LINE);
            break;
        case 3:
            TSTORE(Eight(dst + last - 7), row);  // site: tstore
            break;
        case 4: {  // args[0] starts 64 bytes into its allocation: the element before it
            volatile float value = src[args[3] != 0 ? 0 : -1];  // site: before
            (void)value;
            break;
        }
    }
    pipe_barrier(PIPE_ALL);
}

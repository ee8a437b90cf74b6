// TCVT of an R x C tile, for every conversion the test names: "tcvt_types.h"
// (written by the test) defines R, C and TCVT_PAIRS(X), one X(index, S, D) a
// conversion from S to D, so that one build serves them all.
// args[0] the source, args[1] the destination, args[2] the RoundMode,
// args[3] 1 for SaturationMode::OFF, args[4] the index of the conversion.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tcvt_types.h"
#include "tensor.h"

using namespace pto;

#include "pipe_sync.h"

template <typename S, typename D>
void convert(__gm__ int64_t* args) {
    using Src = Tile<TileType::Vec, S, R, C>;
    using Dst = Tile<TileType::Vec, D, R, C>;
    using SrcGM = GlobalTensor<S, Shape<1, 1, 1, R, C>, Stride<1, 1, 1, C, 1>>;
    using DstGM = GlobalTensor<D, Shape<1, 1, 1, R, C>, Stride<1, 1, 1, C, 1>>;
    Src src;
    Dst dst;
    TASSIGN(src, 0);
    TASSIGN(dst, (Src::kBytes + 31) / 32 * 32);
    TLOAD(src, SrcGM(reinterpret_cast<__gm__ S*>(reinterpret_cast<__gm__ ChipTensor*>(args[0])->buffer.addr)));
    set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
    const auto mode = static_cast<RoundMode>(args[2]);
    if (args[3]) {
        TCVT(dst, src, mode, SaturationMode::OFF);
    } else {
        TCVT(dst, src, mode);
    }
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(DstGM(reinterpret_cast<__gm__ D*>(reinterpret_cast<__gm__ ChipTensor*>(args[1])->buffer.addr)), dst);
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    switch (args[4]) {
#define TCVT_CASE(index, S, D)    \
    case index:                   \
        convert<S, D>(args);      \
        break;
        TCVT_PAIRS(TCVT_CASE)
#undef TCVT_CASE
        default: return;  // no conversion of that index: the destination stays as it was
    }
    pipe_sync();
}

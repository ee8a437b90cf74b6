// Warms L2 with the weights of the two experts the router chose: args[0] and
// args[1], contiguous views of rows of one weight tensor. One session on this
// core's channel group, one TPREFETCH_ASYNC per expert, fire-and-forget: the
// kernel returns while the engine moves the data, as production code warms the
// next layer's weights. (Two warm tasks would each build a session on their
// block's channel group 0 from two cores at once: the sanitizer's shared
// channel group.)
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ uint8_t* workspace = get_dma_workspace(args, DMA_WORKSPACE_SDMA);
    if (workspace == nullptr) return;
    using Flat = GlobalTensor<uint8_t, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    PrefetchAsyncContext ctx(workspace);
    for (int i = 0; i < 2; ++i) {
        __gm__ ChipTensor* w = reinterpret_cast<__gm__ ChipTensor*>(args[i]);
        __gm__ uint8_t* first = reinterpret_cast<__gm__ uint8_t*>(w->buffer.addr) + w->start_offset * get_element_size(w->dtype);
        TPREFETCH_ASYNC(Flat(first, Flat::Shape(static_cast<int64_t>(w->nbytes()))), ctx);
    }
}

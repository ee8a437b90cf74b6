// Must compile: flat [1, 1, 1, 1, N] sources, static or dynamic.
#include <pto/pto-inst.hpp>

using namespace pto;

void kernel(__gm__ uint8_t* workspace, __gm__ float* src) {
    PrefetchAsyncContext ctx(workspace);
    TPREFETCH_ASYNC(GlobalTensor<float, Shape<1, 1, 1, 1, 128>, Stride<1, 1, 1, 1, 1>>(src), ctx);
    using Dynamic = GlobalTensor<float, Shape<1, 1, 1, 1, DYNAMIC>, Stride<1, 1, 1, 1, 1>>;
    TPREFETCH_ASYNC(Dynamic(src, Dynamic::Shape(256)), ctx);
}

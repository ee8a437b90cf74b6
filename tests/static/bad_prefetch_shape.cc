// Must not compile: a [1, 1, 1, 4, 32] source is not flat.
#include <pto/pto-inst.hpp>

using namespace pto;

void kernel(__gm__ uint8_t* workspace, __gm__ float* src) {
    GlobalTensor<float, Shape<1, 1, 1, 4, 32>, Stride<128, 128, 128, 32, 1>> g(src);
    PrefetchAsyncContext ctx(workspace);
    TPREFETCH_ASYNC(g, ctx);
}

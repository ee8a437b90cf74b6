// Must NOT compile: a [4, 32] source is not a flat contiguous logical-1D region.
#include "kernels/pto/pto.h"

using namespace pto;

void kernel(void* workspace, __gm__ float* src) {
    GlobalTensor<float, Shape<1, 1, 1, 4, 32>> g(src);
    PrefetchAsyncContext ctx(workspace);
    TPREFETCH_ASYNC(g, ctx);
}

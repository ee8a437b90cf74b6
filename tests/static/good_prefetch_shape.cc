// Must compile: [N], [1, N] and [1, 1, 1, 1, N] sources are flat.
#include "kernels/pto/pto.h"

using namespace pto;

void kernel(void* workspace, __gm__ float* src) {
    PrefetchAsyncContext ctx(workspace);
    TPREFETCH_ASYNC(GlobalTensor<float, Shape<128>>(src), ctx);
    TPREFETCH_ASYNC(GlobalTensor<float, Shape<1, 128>>(src), ctx);
    TPREFETCH_ASYNC(GlobalTensor<float, Shape<1, 1, 1, 1, 128>>(src), ctx);
}

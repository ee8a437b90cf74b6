// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): an endless loop of GM reads
// expect: still running at the host-time limit

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    volatile __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    for (;;) (void)src[0];
}

// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): printf and write(1) then returns: passes, its text kept off stdout
// expect: PASS
#include <cstdio>
#include <unistd.h>
#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    printf("hello from the kernel\n");
    fflush(stdout);
    (void)!write(1, "written to fd 1\n", 16);
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ float* src = reinterpret_cast<__gm__ float*>(in->buffer.addr);
    __gm__ float* dst = reinterpret_cast<__gm__ float*>(out->buffer.addr);
    for (int i = 0; i < 128; ++i) dst[i] = src[i];
    dcci(dst, ENTIRE_DATA_CACHE, CACHELINE_OUT);
}

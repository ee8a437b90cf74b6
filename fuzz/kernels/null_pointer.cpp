// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): a store through a null pointer
// expect: SIGSEGV (invalid memory access at 0x0)

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    volatile intptr_t null = 0;
    *reinterpret_cast<volatile int*>(null) = 1;
}

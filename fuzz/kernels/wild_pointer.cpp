// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): a store through a wild pointer outside GM
// expect: SIGSEGV (invalid memory access at 0x8)

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    *reinterpret_cast<volatile int*>(8) = 1;
}

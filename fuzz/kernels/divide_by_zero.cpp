// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): an integer division by zero
// expect: SIGFPE

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    volatile int zero = 0, seven = 7;
    volatile int x = seven / zero;
    (void)x;
}

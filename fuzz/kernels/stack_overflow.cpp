// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): unbounded recursion
// expect: stack overflow

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    struct R { static int deeper(volatile int n) { volatile char pad[256]; pad[0] = static_cast<char>(n); return deeper(n + 1) + pad[0]; } };
    R::deeper(0);
}

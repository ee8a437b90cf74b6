// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): for (;;) {}
// expect: still running at the host-time limit

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    for (volatile int i = 0;; i = i + 1) {
    }
}

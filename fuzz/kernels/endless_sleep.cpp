// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): for (;;) sleep(1)
// expect: still running at the host-time limit
#include <unistd.h>
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    for (;;) sleep(1);
}

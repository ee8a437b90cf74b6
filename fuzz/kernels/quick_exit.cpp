// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): _exit(3)
// expect: called exit(3)
#include <unistd.h>
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    _exit(3);
}

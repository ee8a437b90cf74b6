// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): exit(0)
// expect: called exit(0)
#include <cstdlib>
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    exit(0);
}

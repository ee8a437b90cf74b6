// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): throw 42;
// expect: threw an exception of type int

#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    throw 42;
}

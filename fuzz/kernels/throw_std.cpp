// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): throw std::runtime_error
// expect: kernel raised: from the kernel
#include <stdexcept>
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    throw std::runtime_error("from the kernel");
}

// A misbehaving kernel of pfsim's kernel corpus (docs/testing.md): fork()
// expect: called fork()
#include <unistd.h>
#include <cstdint>
#include "tensor.h"
#include "intrinsic.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    if (fork() == 0) _exit(0);
}

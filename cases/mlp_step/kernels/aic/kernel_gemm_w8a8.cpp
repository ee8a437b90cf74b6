// C = A B in int8 with an int32 accumulator (W8A8; gemm_staged.h). args: A, B, C.
#include "../gemm_staged.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    gemm_staged<int8_t, int32_t>(tensor_data<int8_t>(args, 0), tensor_data<int8_t>(args, 1), tensor_data<int32_t>(args, 2));
    pipe_sync();
}

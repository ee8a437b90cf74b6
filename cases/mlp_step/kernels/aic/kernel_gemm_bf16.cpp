// C = A B in bf16 with a float accumulator (gemm_staged.h). args: A, B, C.
#include "../gemm_staged.h"

using namespace pto;

#include "pipe_sync.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    gemm_staged<pto::bfloat16_t, float>(tensor_data<pto::bfloat16_t>(args, 0), tensor_data<pto::bfloat16_t>(args, 1),
                                        tensor_data<float>(args, 2));
    pipe_sync();
}

// One mixed task of `blocks` clusters: each cluster's cube computes a
// 128-column block of C = A x B and its first vector core prefetches the
// cube's next A panels (kernel_matmul_tiled.cpp, built for both core types).
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kCube = 0;
constexpr int32_t kVector = 1;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

// args: tensors A, B, C (tile by tile); scalars m_blocks, blocks.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref(), args.tensor(1).ref());
    task.add_output(args.tensor(2).ref());
    task.add_scalar(args.scalar(0));
    task.launch_spec.set_block_num(static_cast<int>(args.scalar(1)));
    rt_submit_task(MixedKernels{kCube, kVector, INVALID_KERNEL_ID}, task);
}

}  // extern "C"

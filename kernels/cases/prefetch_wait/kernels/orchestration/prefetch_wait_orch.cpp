// `cores` blocks, one per cluster: a mixed task of both vector cores takes
// whole clusters, and the second core of each returns at once
// (kernel_prefetch_wait.cpp), so every block posts on a channel group of its own.
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kPrefetchWait = 0;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

// args: tensors region, status; scalars rounds, part, wait, cores.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_output(args.tensor(1).ref());
    task.add_scalar(args.scalar(0));
    task.add_scalar(args.scalar(1));
    task.add_scalar(args.scalar(2));
    task.launch_spec.set_block_num(static_cast<int>(args.scalar(3)));
    rt_submit_task(MixedKernels{INVALID_KERNEL_ID, kPrefetchWait, kPrefetchWait}, task);
}

}  // extern "C"

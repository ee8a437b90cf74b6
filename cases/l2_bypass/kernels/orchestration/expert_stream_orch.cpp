// One AIC task of `blocks` blocks over the experts (kernel_expert_stream.cpp).
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 8};
}

// args: tensors x, w; scalars experts, d, n, mode, rounds, blocks.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_input(args.tensor(1).ref());
    for (int i = 0; i < 5; ++i) task.add_scalar(args.scalar(i));
    task.launch_spec.set_block_num(static_cast<int>(args.scalar(5)));
    rt_submit_aic_task(0, task);
}

}  // extern "C"

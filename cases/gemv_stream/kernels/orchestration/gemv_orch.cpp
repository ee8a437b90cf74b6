// One AIV task of 48 blocks, one per vector core: y = W x (kernel_gemv.cpp).
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

// args: tensors W, x, y; scalars rows, distance.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref(), args.tensor(1).ref());
    task.add_output(args.tensor(2).ref());
    task.add_scalar(args.scalar(0));
    task.add_scalar(args.scalar(1));
    task.launch_spec.set_block_num(48);
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

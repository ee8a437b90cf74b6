// One AIV task of `blocks` blocks running kernel_misuse.cpp: scalars are the
// misuse to commit (its number), whether to commit its corrected twin
// instead, and the block count.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_inout(args.tensor(1).ref());
    task.add_scalar(args.scalar(0));
    task.add_scalar(args.scalar(1));
    task.launch_spec.set_block_num(static_cast<int32_t>(args.scalar(2)));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

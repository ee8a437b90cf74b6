// One AIV task of kernel_far_copy.cpp over a tensor of 4 GiB or more (args 0)
// and a 4 KiB output (args 1).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 2};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_inout(args.tensor(1).ref());
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

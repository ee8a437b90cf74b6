// One AIV task over the sort kernel's tensors: x, idx in; the sorted, merged
// and gathered results in and out.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 9};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    for (uint32_t i = 0; i < 2; ++i) task.add_input(args.tensor(i).ref());
    for (uint32_t i = 2; i < 9; ++i) task.add_inout(args.tensor(i).ref());
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

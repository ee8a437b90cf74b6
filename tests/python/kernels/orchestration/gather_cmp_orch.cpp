// One AIV task over the compare-gather kernel's arguments: src and the
// thresholds in, dst and the counts in and out, the index offset and the
// variant as scalars.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    for (uint32_t i = 0; i < 2; ++i) task.add_input(args.tensor(i).ref());
    for (uint32_t i = 2; i < 4; ++i) task.add_inout(args.tensor(i).ref());
    task.add_scalar(args.scalar(0), args.scalar(1));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

// One AIV task (kernel_stamp.cpp) tagged with how many times this loaded
// orchestration object has run: a static that lives as long as the object.
#include "pto_orchestration_api.h"

static uint64_t runs = 0;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 1};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    ++runs;
    CoreTaskArgs task;
    task.add_output(args.tensor(0).ref());
    task.add_scalar(uint64_t{1}, runs);
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

// One AIV task: the TCVT kernel, source in, destination out, three scalars
// (the RoundMode, the saturation, the conversion's index).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_output(args.tensor(1).ref());
    task.add_scalar(args.scalar(0), args.scalar(1), args.scalar(2));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

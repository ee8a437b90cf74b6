// One AIC task: A, B, bias in, C in and out, the form and the variant as scalars.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref(), args.tensor(1).ref(), args.tensor(2).ref());
    task.add_inout(args.tensor(3).ref());
    task.add_scalar(args.scalar(0), args.scalar(1));
    rt_submit_aic_task(0, task);
}

}  // extern "C"

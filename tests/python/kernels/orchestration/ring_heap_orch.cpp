// Two AIV tasks (kernel_stamp.cpp), each writing an output of scalar(0) floats
// the runtime allocates, in two consecutive scopes (scalar(1) == 0) or in one;
// then one writing tensor(0).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

static void fill(const TensorCreateInfo& scratch) {
    CoreTaskArgs task;
    task.add_output(scratch);
    task.add_scalar(uint64_t{1}, uint64_t{7});
    rt_submit_aiv_task(0, task);
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const uint32_t shape[1] = {static_cast<uint32_t>(args.scalar(0))};
    const TensorCreateInfo scratch(shape, 1, DataType::FLOAT32);
    if (args.scalar(1)) {
        PTO2_SCOPE() {
            fill(scratch);
            fill(scratch);
        }
    } else {
        PTO2_SCOPE() { fill(scratch); }
        PTO2_SCOPE() { fill(scratch); }
    }
    CoreTaskArgs last;
    last.add_output(args.tensor(0).ref());
    last.add_scalar(uint64_t{1}, uint64_t{7});
    rt_submit_aiv_task(0, last);
}

}  // extern "C"

// One AIV task of scalar(0) blocks over input tensor 0 into output tensor 1,
// scalars 1 to 3 passed on (kernel_scalar_reads.cpp: elements a pass, passes,
// how loads are made; kernel_pointer_chase.cpp: steps a pass, passes, mode).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_output(args.tensor(1).ref());
    task.add_scalar(args.scalar(1), args.scalar(2), args.scalar(3));
    task.launch_spec.set_block_num(static_cast<int>(args.scalar(0)));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

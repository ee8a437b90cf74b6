// One AIV task on kernel_poll.cpp of scalar(0) blocks: hold scalar(1) ticks per
// block index, reads made as scalar(2) says, a store every scalar(3) reads.
// Tensor: the blocks' lines (int64, 8 per block).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_output(args.tensor(0).ref());
    task.add_scalar(args.scalar(1), args.scalar(2), args.scalar(3));
    task.launch_spec.set_block_num(static_cast<int>(args.scalar(0)));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

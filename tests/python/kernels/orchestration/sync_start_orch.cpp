// Three independent AIV task groups on kernel_stamp.cpp, submitted in order:
//   a blocker of scalar(0) blocks holding scalar(1) ticks per block index,
//   scalar(4) single-block stream tasks holding scalar(5) ticks each,
//   a cohort of scalar(2) blocks, launch_spec.set_require_sync_start(scalar(3) != 0).
// Tensors: the blocker's, the cohort's and the stream's stamps (int64, a line per block).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 9};
}

static void submit(const ChipTensor& out, uint64_t blocks, uint64_t hold, bool sync_start) {
    CoreTaskArgs task;
    task.add_output(out);
    task.add_scalar(hold, uint64_t{0});
    task.launch_spec.set_block_num(static_cast<int>(blocks));
    task.launch_spec.set_require_sync_start(sync_start);
    rt_submit_aiv_task(0, task);
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    submit(args.tensor(0).ref(), args.scalar(0), args.scalar(1), false);
    for (uint64_t i = 0; i < args.scalar(4); ++i) submit(args.tensor(2).ref(), 1, args.scalar(5), false);
    submit(args.tensor(1).ref(), args.scalar(2), 1, args.scalar(3) != 0);
}

}  // extern "C"

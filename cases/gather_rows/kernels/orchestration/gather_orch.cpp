// Four blocks, one per cluster, gathering rows of the table
// (kernel_gather_rows.cpp). A mixed task of both vector cores takes whole
// clusters; the second core of each returns at once, so that every block
// posts on a channel group of its own (the two vector cores of a cluster
// share one).
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kGather = 0;
constexpr int kBlocks = 4;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

// args: tensors table, index, out; scalars indices per block, distance, passes.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref(), args.tensor(1).ref());
    task.add_output(args.tensor(2).ref());
    task.add_scalar(args.scalar(0));
    task.add_scalar(args.scalar(1));
    task.add_scalar(args.scalar(2));
    task.launch_spec.set_block_num(kBlocks);
    rt_submit_task(MixedKernels{INVALID_KERNEL_ID, kGather, kGather}, task);
}

}  // extern "C"

// `cores` blocks, one per cluster: a mixed task of both vector cores takes
// whole clusters, and the second core of each returns at once
// (kernel_prefetch_wait.cpp), so every block posts on a channel group of its own.
// With `scopes` 1 each block is a task of its own (as separately submitted warm
// scopes are), its slice named by a scalar; the tasks share the tensors without
// a dependency, so they run at once.
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kPrefetchWait = 0;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 8};
}

// args: tensors region, status; scalars rounds, part, wait, cores, scopes, lead.
// The kernel's scalars: rounds, part, wait, its first slice, the slice count, lead.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const int64_t cores = static_cast<int64_t>(args.scalar(3));
    const bool scopes = args.scalar(4) != 0;
    for (int64_t first = 0; first < cores; first += scopes ? 1 : cores) {
        CoreTaskArgs task;
        if (scopes) {
            task.add_no_dep(args.tensor(0).ref(), args.tensor(1).ref());
        } else {
            task.add_input(args.tensor(0).ref());
            task.add_output(args.tensor(1).ref());
        }
        task.add_scalar(args.scalar(0), args.scalar(1), args.scalar(2), first, cores, args.scalar(5));
        task.launch_spec.set_block_num(scopes ? 1 : static_cast<int>(cores));
        rt_submit_task(MixedKernels{INVALID_KERNEL_ID, kPrefetchWait, kPrefetchWait}, task);
    }
}

}  // extern "C"

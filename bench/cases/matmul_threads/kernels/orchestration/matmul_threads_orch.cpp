// One cube task for bench/tile_threads.sh: `reps` products of shape `shape`.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

// args: tensor out (fp32, 8); scalars shape, reps.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_output(args.tensor(0).ref());
    task.add_scalar(args.scalar(0));
    task.add_scalar(args.scalar(1));
    rt_submit_aic_task(0, task);
}

}  // extern "C"

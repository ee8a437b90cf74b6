// Orchestration of the onboard demo's shape: one AIV task that reads `in`
// and writes `out`. The SDMA workspace reaches the kernel through its
// GlobalContext, not as an argument.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig prefetch_demo_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 2};
}

__attribute__((visibility("default"))) void prefetch_demo_orchestration(const ChipTaskArgs& args) {
    if (args.tensor_count() + args.scalar_count() != 2) {
        LOG_ERROR("prefetch_demo: expected 2 arguments (in, out), got %u",
                  args.tensor_count() + args.scalar_count());
        return;
    }
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_output(args.tensor(1).ref());
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

// A misbehaving orchestration of pfsim's kernel corpus (docs/testing.md): throw 42;
// expect: threw an exception of type int

#include <stdint.h>
#include "pto_orchestration_api.h"
extern "C" {
__attribute__((visibility("default"))) PTO2OrchestrationConfig prefetch_demo_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 2};
}
__attribute__((visibility("default"))) void prefetch_demo_orchestration(const ChipTaskArgs& args) {
    throw 42;
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref());
    task.add_output(args.tensor(1).ref());
    rt_submit_aiv_task(0, task);
}
}

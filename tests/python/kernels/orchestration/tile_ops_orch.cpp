// One AIV task over the tile-op kernel's tensors: a, b, vr, vc in; y, yr, yc
// out; then a spare tensor slot (unused) and the scalars (op, scalar bits,
// the element type's index).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 10};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    for (uint32_t i = 0; i < 4; ++i) task.add_input(args.tensor(i).ref());
    for (uint32_t i = 4; i < 7; ++i) task.add_inout(args.tensor(i).ref());
    task.add_input(args.tensor(0).ref());  // slot 7: keeps the scalars at args[8] to args[10]
    task.add_scalar(args.scalar(0), args.scalar(1), args.scalar(2));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

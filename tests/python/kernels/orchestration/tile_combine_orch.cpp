// One AIV task of `blocks` blocks over the combining kernel's tensors: a, b,
// vr, vc, parts in; y, acc, yi in and out; then the scalars (op, blocks, the
// element type's index).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 11};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    for (uint32_t i = 0; i < 5; ++i) task.add_input(args.tensor(i).ref());
    for (uint32_t i = 5; i < 8; ++i) task.add_inout(args.tensor(i).ref());
    task.add_scalar(args.scalar(0), args.scalar(1), args.scalar(2));
    task.launch_spec.set_block_num(static_cast<int>(args.scalar(1)));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

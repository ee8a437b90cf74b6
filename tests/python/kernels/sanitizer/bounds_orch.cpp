// One AIV task of kernel_bounds.cpp: the input and output tensors and the
// access (scalars: access, fixed). For access 4 the input is a tensor that
// starts 64 bytes into the input's allocation (its last 984 floats), so the
// bytes before it are that allocation's too.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    const ChipTensor& in = args.tensor(0).ref();
    const uint32_t tail[] = {984};
    if (args.scalar(0) == 4) {
        task.add_input(make_tensor_external(reinterpret_cast<void*>(in.buffer.addr + 64), tail, 1));
    } else {
        task.add_input(in);
    }
    task.add_inout(args.tensor(1).ref());
    task.add_scalar(args.scalar(0));
    task.add_scalar(args.scalar(1));
    rt_submit_aiv_task(0, task);
}

}  // extern "C"

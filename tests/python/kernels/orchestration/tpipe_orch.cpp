// One mixed task on a cluster: the cube kernel (func_id 0) and the vector
// kernel (func_id 1) of kernel_tpipe.cpp. A, B in; Y out; the FIFO's GM in and
// out; the scenario and the tile count as scalars.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    CoreTaskArgs task;
    task.add_input(args.tensor(0).ref(), args.tensor(1).ref());
    task.add_inout(args.tensor(2).ref(), args.tensor(3).ref());
    task.add_scalar(args.scalar(0), args.scalar(1));
    rt_submit_task(MixedKernels{0, 1, 1}, task);
}

}  // extern "C"

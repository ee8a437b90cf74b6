// The field's use of prefetch across tasks: while a compute-bound cube task
// runs, a vector task warms the weights of the next, bandwidth-bound task.
// The consumer depends on the matmul (it takes C as an input) and, explicitly,
// on the warm: a fire-and-forget or waited warm completes long before the
// matmul; a deferred one (mode 2) only when its prefetch is done, which is
// what holds the consumer back until the weights are in L2.
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kMatmul = 0;
constexpr int32_t kWarm = 1;
constexpr int32_t kRowsum = 2;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 9};
}

// args: tensors A, B, C, W, Y; scalars iters, mode (kernel_warm.cpp), blocks,
// work (kernel_rowsum.cpp).
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& a = args.tensor(0).ref();
    const ChipTensor& b = args.tensor(1).ref();
    const ChipTensor& c = args.tensor(2).ref();
    const ChipTensor& w = args.tensor(3).ref();
    const ChipTensor& y = args.tensor(4).ref();
    const uint64_t iters = args.scalar(0), mode = args.scalar(1);
    const int blocks = static_cast<int>(args.scalar(2));
    const uint64_t work = args.scalar(3);

    CoreTaskArgs matmul;
    matmul.add_input(a, b);
    matmul.add_output(c);
    matmul.add_scalar(iters);
    rt_submit_aic_task(kMatmul, matmul);

    CoreTaskArgs warm;
    warm.add_input(w);
    warm.add_scalar(mode);
    const PTO2TaskId warmed = rt_submit_aiv_task(kWarm, warm).task_id();

    CoreTaskArgs rowsum;
    rowsum.add_input(w, c);
    rowsum.add_output(y);
    rowsum.add_scalar(work);
    rowsum.set_dependencies(&warmed, 1);
    rowsum.launch_spec.set_block_num(blocks);
    rt_submit_aiv_task(kRowsum, rowsum);
}

}  // extern "C"

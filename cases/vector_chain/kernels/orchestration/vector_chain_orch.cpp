// out = 2 * (a + b) + a as three SPMD vector tasks. The sum and the doubled
// sum are intermediates the runtime allocates; the second and third tasks
// sit in a nested scope. Dependencies come from the tensors alone.
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kAdd = 0;
constexpr int32_t kScale = 1;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& a = args.tensor(0).ref();
    const ChipTensor& b = args.tensor(1).ref();
    const ChipTensor& out = args.tensor(2).ref();
    const int blocks = static_cast<int>(args.scalar(0));
    uint32_t shape[1] = {a.shapes[0]};

    PTO2_SCOPE() {
        TensorCreateInfo sum_info(shape, 1, DataType::FLOAT32);
        CoreTaskArgs add;
        add.add_input(a, b);
        add.add_output(sum_info);
        add.launch_spec.set_block_num(blocks);
        TaskOutputTensors sum = rt_submit_aiv_task(kAdd, add);

        PTO2_SCOPE() {
            TensorCreateInfo twice_info(shape, 1, DataType::FLOAT32);
            CoreTaskArgs scale;
            scale.add_input(sum.get_ref(0));
            scale.add_output(twice_info);
            scale.add_scalar(2.0f);
            scale.launch_spec.set_block_num(blocks);
            TaskOutputTensors twice = rt_submit_aiv_task(kScale, scale);

            CoreTaskArgs last;
            last.add_input(twice.get_ref(0), a);
            last.add_output(out);
            last.launch_spec.set_block_num(blocks);
            rt_submit_aiv_task(kAdd, last);
        }
    }
    LOG_INFO("vector_chain: 3 tasks of %d blocks over %u elements", blocks, shape[0]);
}

}  // extern "C"

// A 500-task graph for the scheduler benchmark: 250 cube tiles C_i = A x B,
// each added into a running sum by a vector task (sum_{i+1} = sum_i + C_i),
// the last add writing `out`. Every add waits for its matmul and the add
// before it; the matmuls run as wide as the cube cores allow.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

// args: tensors A, B (fp16 128 x 128), zero (the initial sum), out (fp32 128 x 128); scalar tiles.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& a = args.tensor(0).ref();
    const ChipTensor& b = args.tensor(1).ref();
    const ChipTensor& zero = args.tensor(2).ref();
    const ChipTensor& out = args.tensor(3).ref();
    const int tiles = static_cast<int>(args.scalar(0));
    uint32_t tile[2] = {128, 128};
    uint32_t flat[1] = {128 * 128};
    ChipTensor sum = zero;
    for (int i = 0; i < tiles; ++i) {
        PTO2_SCOPE() {
            TensorCreateInfo c_info(tile, 2, DataType::FLOAT32);
            CoreTaskArgs mm;
            mm.add_input(a, b);
            mm.add_output(c_info);
            mm.add_scalar(uint64_t{1});
            TaskOutputTensors c = rt_submit_aic_task(0, mm);
            ChipTensor c_flat = c.get_ref(0);
            c_flat.ndims = 1;
            c_flat.shapes[0] = flat[0];
            c_flat.strides[0] = 1;
            CoreTaskArgs add;
            add.add_input(sum, c_flat);
            if (i + 1 < tiles) {
                TensorCreateInfo s_info(flat, 1, DataType::FLOAT32);
                add.add_output(s_info);
                sum = rt_submit_aiv_task(1, add).get_ref(0);
            } else {
                add.add_output(out);
                rt_submit_aiv_task(1, add);
            }
        }
    }
}

}  // extern "C"

// `tasks` vector tasks for the memory benchmark (bench/scale.sh): each computes
// out = x + y, the same values into the same tensor.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}

// args: tensors x, y, out (fp32, 2048 each); scalar tasks.
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& x = args.tensor(0).ref();
    const ChipTensor& y = args.tensor(1).ref();
    const ChipTensor& out = args.tensor(2).ref();
    const int64_t tasks = static_cast<int64_t>(args.scalar(0));
    for (int64_t i = 0; i < tasks; ++i) {
        PTO2_SCOPE() {
            CoreTaskArgs add;
            add.add_input(x, y);
            add.add_output(out);
            rt_submit_aiv_task(0, add);
        }
    }
}

}  // extern "C"

// out = 2 * (a + b) + a (vector_chain's kernels), with CoreTaskArgs::dump marks
// for the argument-dump tests (tests/python/test_diagnostics.py):
//   task 0 (ring 0): add(a, b) -> sum, marks its output sum_info only;
//   task 1 (ring 1): scale(sum) -> twice by `two`, added twice, marks `two`
//                    (the first of the two, ambiguous);
//   task 2 (ring 1): add(twice, a) -> out, marks every argument.
#include <stdint.h>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& a = args.tensor(0).ref();
    const ChipTensor& b = args.tensor(1).ref();
    const ChipTensor& out = args.tensor(2).ref();
    uint32_t shape[1] = {a.shapes[0]};

    TensorCreateInfo sum_info(shape, 1, DataType::FLOAT32);
    CoreTaskArgs add;
    add.add_input(a, b);
    add.add_output(sum_info);
    add.dump(sum_info);
    const ChipTensor& sum = rt_submit_aiv_task(0, add).get_ref(0);

    PTO2_SCOPE() {
        TensorCreateInfo twice_info(shape, 1, DataType::FLOAT32);
        float two = 2.0f;
        CoreTaskArgs scale;
        scale.add_input(sum);
        scale.add_output(twice_info);
        scale.add_scalar(two, two);
        scale.dump(two);
        const ChipTensor& twice = rt_submit_aiv_task(1, scale).get_ref(0);

        CoreTaskArgs last;
        last.add_input(twice, a);
        last.add_output(out);
        last.dump();
        rt_submit_aiv_task(0, last);
    }
}

}  // extern "C"

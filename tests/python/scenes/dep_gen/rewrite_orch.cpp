// An output rewritten by consecutive tasks, for the deps.json tests
// (tests/python/test_diagnostics.py), with vector_chain's kernels:
//   tasks 0-2: add(a, b) -> out (existing): three producers of the same bytes;
//   task 3:    scale(out) -> twice: a TensorMap edge from each of tasks 0, 1, 2;
//   task 4:    add(a, b) -> out (inout): edges from tasks 0, 1, 2, whose entries
//              its write covers and retires;
//   task 5:    scale(out) -> twice: an edge from task 4 only.
// DEP_GEN_MANUAL_OUT marks out manual_dep: no task then takes a TensorMap edge.
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
#ifdef DEP_GEN_MANUAL_OUT
    constexpr bool kManual = true;
#else
    constexpr bool kManual = false;
#endif
    uint32_t shape[1] = {a.shapes[0]};
    uint32_t origin[1] = {0};
    const ChipTensor out = args.tensor(2).ref().view(shape, origin, kManual);
    TensorCreateInfo twice_info(shape, 1, DataType::FLOAT32);
    for (int i = 0; i < 3; ++i) {
        CoreTaskArgs add;
        add.add_input(a, b);
        add.add_output(out);
        rt_submit_aiv_task(0, add);
    }
    CoreTaskArgs scale;
    scale.add_input(out);
    scale.add_output(twice_info);
    scale.add_scalar(2.0f);
    rt_submit_aiv_task(1, scale);

    CoreTaskArgs rewrite;
    rewrite.add_input(a, b);
    rewrite.add_inout(out);
    rt_submit_aiv_task(0, rewrite);

    CoreTaskArgs again;
    again.add_input(out);
    again.add_output(twice_info);
    again.add_scalar(2.0f);
    rt_submit_aiv_task(1, again);
}

}  // extern "C"

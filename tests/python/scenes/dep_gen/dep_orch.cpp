// One edge of each source simpler's dep-gen records, for the deps.json tests
// (tests/python/test_diagnostics.py), with vector_chain's kernels:
//   task 0: add(a, b) -> sum (allocated);
//   task 1: add(sum, a) -> out (existing): a creator edge from task 0;
//   task 2: scale(out) -> twice, after task 0 explicitly: a TensorMap edge from
//           task 1 (out whole: it covers what task 1 wrote) and an explicit one;
//   task 3: add(out's first half, a's) -> half: a TensorMap edge from task 1
//           whose slice does not cover what task 1 wrote.
// DEP_GEN_MANUAL_OUT marks out manual_dep: tasks 2 and 3 then take no TensorMap edge.
// DEP_GEN_REWRITE runs an output rewritten by consecutive tasks instead:
//   tasks 0-2: add(a, b) -> out (existing): three producers of the same bytes;
//   task 3:    scale(out) -> twice: a TensorMap edge from each of tasks 0, 1, 2;
//   task 4:    add(a, b) -> out (inout): edges from tasks 0, 1, 2, whose entries
//              its write covers and retires;
//   task 5:    scale(out) -> twice: an edge from task 4 only
// (with DEP_GEN_MANUAL_OUT too, no task takes a TensorMap edge).
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
    uint32_t half[1] = {a.shapes[0] / 2};
    uint32_t origin[1] = {0};
    const ChipTensor out = args.tensor(2).ref().view(shape, origin, kManual);
#ifdef DEP_GEN_REWRITE
    (void)half;
    TensorCreateInfo twice_info(shape, 1, DataType::FLOAT32);
    for (int i = 0; i < 3; ++i) {
        CoreTaskArgs add;
        add.add_input(a, b);
        add.add_output(out);
        rt_submit_aiv_task(0, add);
    }
    auto scale_out = [&] {
        CoreTaskArgs scale;
        scale.add_input(out);
        scale.add_output(twice_info);
        scale.add_scalar(2.0f);
        rt_submit_aiv_task(1, scale);
    };
    scale_out();
    CoreTaskArgs rewrite;
    rewrite.add_input(a, b);
    rewrite.add_inout(out);
    rt_submit_aiv_task(0, rewrite);
    scale_out();
#else
    TensorCreateInfo sum_info(shape, 1, DataType::FLOAT32);
    CoreTaskArgs add;
    add.add_input(a, b);
    add.add_output(sum_info);
    TaskOutputTensors first = rt_submit_aiv_task(0, add);

    CoreTaskArgs again;
    again.add_input(first.get_ref(0), a);
    again.add_output(out);
    rt_submit_aiv_task(0, again);

    TensorCreateInfo twice_info(shape, 1, DataType::FLOAT32);
    CoreTaskArgs scale;
    scale.add_input(out);
    scale.add_output(twice_info);
    scale.add_scalar(2.0f);
    PTO2TaskId before = first.task_id();
    scale.set_dependencies(&before, 1);
    rt_submit_aiv_task(1, scale);

    TensorCreateInfo half_info(half, 1, DataType::FLOAT32);
    CoreTaskArgs part;
    part.add_input(out.view(half, origin, kManual), a.view(half, origin));
    part.add_output(half_info);
    rt_submit_aiv_task(0, part);
#endif
}

}  // extern "C"

// Every orchestration name of simpler's tensormap_and_ringbuffer runtime that
// pfsim provides, in the old and the new spelling side by side (simpler-compat.md
// §6): this file must compile (compile_check.sh). With -DPFSIM_UNKNOWN_NAME it
// uses one name nobody defines and must not (the check's negative control).
#include "aicpu/cache_maintenance.h"
#include "orchestration_api.h"
#include "pto_arg_with_deps.h"
#include "pto_orchestration_api.h"
#include "runtime.h"

extern "C" PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) { return {2}; }
OrchestrationConfig new_config(const ChipTaskArgs&) { return OrchestrationConfig{2}; }

extern "C" void aicpu_orchestration_entry(const ChipTaskArgs& orch_args) {
    const ChipTensor& in = orch_args.tensor(0).ref();
    const simpler::tmr::Tensor& same = orch_args.tensor(0).ref();
    const TaskTensor* kernel_view = &same;
    uint32_t shape[1] = {4}, offset[1] = {0}, flat[2] = {2, 2};
    ChipTensor part = in.view(shape, offset, true).reshape(flat, 2);
    ChipTensor external = make_tensor_external(in.data_as<float>(), shape, 1, DataType::FLOAT32);
    TensorCreateInfo ci(shape, 1, DataType::INT32), ci2(shape, 1);
    TaskOutputTensors counts = alloc_tensors(ci, ci2);
    TaskOutputTensors more = alloc_tensors(&ci, 1);
    uint32_t idx[1] = {0};
    set_tensor_data(counts.get_ref(0), 1, idx, int32_t{3});
    const float first = get_tensor_data<float>(*kernel_view, 1, idx);
    const uint64_t raw = get_tensor_data(external, 1, idx);

    CoreTaskArgs args;
    args.add_input(part);
    args.add_output(more.get_ref(0));
    args.add_scalar(first, raw);
    args.set_allow_early_resolve(true);
    CoreTaskPredicate predicate;
    predicate.operand = {&counts.get_ref(0), 1, {0}};
    predicate.op = PredicateOp::GT;
    predicate.target = 0;
    args.set_predicate(predicate);
    const TaskId t = rt_submit_aiv_task(0, args).task_id();
    const PTO2TaskId same_id = t;
    (void)args.scalar(0);
    (void)args.tensor(0).ref();
    args.reset();

    PTO2_SCOPE(PTO2ScopeMode::MANUAL) {
        CoreTaskArgsWithDeps<4> with_deps;
        with_deps.add_dep(same_id);
        with_deps.add_dep_wait(t);
        rt_submit_dummy_task(with_deps);
    }
    SIMPLER_SCOPE(ScopeMode::AUTO) { cache_invalidate_range(&raw, sizeof raw); }
    static_assert(SIMPLER_ERROR_ASYNC_WAIT_OVERFLOW == PTO2_ERROR_ASYNC_WAIT_OVERFLOW, "one code, two names");
    if (!rt_is_fatal()) rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "%s", "never: names only");
#ifdef PFSIM_UNKNOWN_NAME
    SIMPLER_SCOPE_THAT_NOBODY_DEFINES() {}
#endif
}

// A mixture-of-experts step whose weights are warmed once the router has
// chosen them. A compute-bound cube task (standing for the attention before
// the layer) runs first; beside it a vector task routes: it writes the two
// chosen experts and the second one's gate into a tensor the runtime
// allocates. The orchestrator reads the two expert indices back (waiting, in
// simulated time, for the router only), warms exactly those experts' weights
// -- rows of one weight tensor, as views; one task posts both -- while the
// cube task still runs, then submits each expert's row-sum over its view into
// its slot of Y. The
// second expert's row-sum runs only if its gate is set: a predicate the
// scheduler reads when the task is ready, so the orchestrator does not wait
// for it. Written with the names after simpler's pinned commit
// ("orchestration_api.h", OrchestrationConfig, TaskTensor, TaskId).
#include <stdint.h>

#include "orchestration_api.h"
#include "pto_arg_with_deps.h"

constexpr int32_t kMatmul = 0;
constexpr int32_t kRouter = 1;
constexpr int32_t kWarm = 2;
constexpr int32_t kRowsum = 3;
constexpr int kExpertsChosen = 2;

extern "C" {

__attribute__((visibility("default"))) OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return OrchestrationConfig{.expected_arg_count = 10};
}

// args: tensors A, B, C, scores, W (experts x rows rows of 4096), Y (2 x rows);
// scalars iters (the cube task), threshold (the second expert's gate), blocks,
// work (the row-sum).
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const TaskTensor& a = args.tensor(0).ref();
    const TaskTensor& b = args.tensor(1).ref();
    const TaskTensor& c = args.tensor(2).ref();
    const TaskTensor& scores = args.tensor(3).ref();
    const TaskTensor& w = args.tensor(4).ref();
    const TaskTensor& y = args.tensor(5).ref();
    const uint64_t iters = args.scalar(0), threshold = args.scalar(1), work = args.scalar(3);
    const int blocks = static_cast<int>(args.scalar(2));
    const uint32_t rows = y.shapes[1];
    if (w.shapes[0] != scores.shapes[0] * rows || scores.shapes[0] < kExpertsChosen) {
        rt_report_fatal(PTO2_ERROR_INVALID_ARGS, "W has %u rows: expected %u experts x %u", w.shapes[0],
                        scores.shapes[0], rows);
        return;
    }

    CoreTaskArgs attention;
    attention.add_input(a, b);
    attention.add_output(c);
    attention.add_scalar(iters);
    rt_submit_aic_task(kMatmul, attention);

    uint32_t route_shape[1] = {8};
    const TensorCreateInfo route_info(route_shape, 1, DataType::INT32);
    TaskOutputTensors routed = alloc_tensors(route_info);
    const TaskTensor& route = routed.get_ref(0);
    CoreTaskArgs router;
    router.add_input(scores);
    router.add_inout(route);
    router.add_scalar(threshold);
    const TaskId routed_by = rt_submit_aiv_task(kRouter, router).task_id();

    TaskTensor weights[kExpertsChosen];
    for (uint32_t slot = 0; slot < kExpertsChosen; ++slot) {
        const uint32_t at[1] = {slot};
        const uint32_t expert = static_cast<uint32_t>(get_tensor_data<int32_t>(route, 1, at));
        const uint32_t shape[2] = {rows, w.shapes[1]}, first_row[2] = {expert * rows, 0};
        weights[slot] = w.view(shape, first_row);
    }

    CoreTaskArgs warm;  // fire-and-forget: it completes at once
    warm.add_input(weights[0], weights[1]);
    const TaskId warmed = rt_submit_aiv_task(kWarm, warm).task_id();

    for (uint32_t slot = 0; slot < kExpertsChosen; ++slot) {
        const uint32_t shape[2] = {1, rows}, row[2] = {slot, 0};
        const TaskTensor out = y.view(shape, row);  // the arguments keep its address until the submission
        CoreTaskArgsWithDeps<2> rowsum;
        rowsum.add_input(weights[slot], c);
        rowsum.add_output(out);
        rowsum.add_scalar(work);
        rowsum.add_dep(warmed);
        if (slot == 1) {  // the runner-up only if its gate is set
            rowsum.add_dep(routed_by);  // the predicate's producer
            CoreTaskPredicate gate;
            gate.operand = {&route, 1, {2}};
            gate.op = PredicateOp::NE;
            gate.target = 0;
            rowsum.set_predicate(gate);
        }
        rowsum.launch_spec.set_block_num(blocks);
        rt_submit_aiv_task(kRowsum, rowsum);
    }
}

}  // extern "C"

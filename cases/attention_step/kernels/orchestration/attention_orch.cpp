// One attention step for a block of query rows, with the next operand warmed:
//   task 0 (AIC)  S = Q K^T                      (S from the heap ring)
//   task 1 (AIV)  TPREFETCH_ASYNC of V into L2, not waited (runs beside task 0)
//   task 2 (AIV)  m, l, P = online-softmax step of S * scale
//   task 3 (AIC)  O = P V                        (V's loads hit L2 when warmed)
// Arguments: Q, K^T, V, O, m, l (tensors), scale (float bits).
#include "pto_orchestration_api.h"

namespace {
constexpr int kQk = 0, kWarm = 1, kSoftmax = 2, kPv = 3;
}

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 7};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& q = args.tensor(0).ref();
    const ChipTensor& kt = args.tensor(1).ref();
    const ChipTensor& v = args.tensor(2).ref();
    const ChipTensor& o = args.tensor(3).ref();
    const ChipTensor& m = args.tensor(4).ref();
    const ChipTensor& l = args.tensor(5).ref();
    uint32_t s_shape[2] = {q.shapes[0], kt.shapes[1]};

    PTO2_SCOPE() {
        CoreTaskArgs qk;
        qk.add_input(q, kt);
        qk.add_output(TensorCreateInfo(s_shape, 2, DataType::FLOAT32));
        TaskOutputTensors s = rt_submit_aic_task(kQk, qk);

        CoreTaskArgs warm;
        warm.add_input(v);
        warm.add_scalar(uint64_t{0});  // fire and forget
        rt_submit_aiv_task(kWarm, warm);

        CoreTaskArgs softmax;
        softmax.add_input(s.get_ref(0));
        softmax.add_output(TensorCreateInfo(s_shape, 2, DataType::BFLOAT16));
        softmax.add_output(m, l);
        softmax.add_scalar(args.scalar(0));
        TaskOutputTensors p = rt_submit_aiv_task(kSoftmax, softmax);

        CoreTaskArgs pv;
        pv.add_input(p.get_ref(0), v);
        pv.add_output(o);
        rt_submit_aic_task(kPv, pv);
    }
}

}  // extern "C"

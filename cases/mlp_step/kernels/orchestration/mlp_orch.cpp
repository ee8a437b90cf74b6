// Two matmul layers of an MLP step, the second layer's weights warmed:
//   task 0 (AIC)  C1 = X W1                     (C1 from the heap ring)
//   task 1 (AIV)  TPREFETCH_ASYNC of W2 into L2, not waited (beside task 0)
//   task 2 (AIV)  H = C1 in the operand type    (bf16; or int8, scaled)
//   task 3 (AIC)  Y = H W2                      (W2's loads hit L2 when warmed)
// Arguments: X, W1, W2, Y (tensors), the requant pair (0 bf16, 1 int8), the
// int8 scale (float bits). X's dtype says the operand type.
#include "pto_orchestration_api.h"

namespace {
constexpr int kGemm = 0, kWarm = 1, kRequant = 2;
}

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 6};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& x = args.tensor(0).ref();
    const ChipTensor& w1 = args.tensor(1).ref();
    const ChipTensor& w2 = args.tensor(2).ref();
    const ChipTensor& y = args.tensor(3).ref();
    const bool int8 = x.dtype == DataType::INT8;
    uint32_t c_shape[2] = {x.shapes[0], w1.shapes[1]};

    PTO2_SCOPE() {
        CoreTaskArgs layer1;
        layer1.add_input(x, w1);
        layer1.add_output(TensorCreateInfo(c_shape, 2, int8 ? DataType::INT32 : DataType::FLOAT32));
        TaskOutputTensors c1 = rt_submit_aic_task(kGemm, layer1);

        CoreTaskArgs warm;
        warm.add_input(w2);
        warm.add_scalar(uint64_t{0});  // fire and forget
        rt_submit_aiv_task(kWarm, warm);

        CoreTaskArgs requant;
        requant.add_input(c1.get_ref(0));
        requant.add_output(TensorCreateInfo(c_shape, 2, x.dtype));
        requant.add_scalar(args.scalar(0), args.scalar(1));
        TaskOutputTensors h = rt_submit_aiv_task(kRequant, requant);

        CoreTaskArgs layer2;
        layer2.add_input(h.get_ref(0), w2);
        layer2.add_output(y);
        rt_submit_aic_task(kGemm, layer2);
    }
}

}  // extern "C"

// A layer computed on the cube, then the next layer as a cube->vector
// pipeline in one cluster, its weights warmed while the first layer runs:
//   task 0 (AIC)  X = A B                        (bf16 operands; X from the heap ring)
//   task 1 (AIV)  TPREFETCH_ASYNC of W into L2, not waited (beside task 0)
//   task 2 (MIX)  Y = relu(X W + bias): the cube pushes each column block of
//                 X W through a TPipe, the vector cores add the bias and apply
//                 ReLU (W's loads hit L2 when warmed)
// Arguments: A, B, W, bias, Y (tensors).
#include "pto_orchestration_api.h"

namespace {
constexpr int kGemm = 0, kWarm = 1, kLinearCube = 2, kLinearVector = 3;
constexpr uint32_t kFifoBytes = 2 * 32 * 64 * sizeof(float);  // two slots of one 32 x 64 float block
}

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 5};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& a = args.tensor(0).ref();
    const ChipTensor& b = args.tensor(1).ref();
    const ChipTensor& w = args.tensor(2).ref();
    const ChipTensor& bias = args.tensor(3).ref();
    const ChipTensor& y = args.tensor(4).ref();
    uint32_t x_shape[2] = {a.shapes[0], b.shapes[1]};
    uint32_t fifo_shape[1] = {kFifoBytes};

    PTO2_SCOPE() {
        CoreTaskArgs layer1;
        layer1.add_input(a, b);
        layer1.add_output(TensorCreateInfo(x_shape, 2, DataType::FLOAT32));
        TaskOutputTensors x = rt_submit_aic_task(kGemm, layer1);

        CoreTaskArgs warm;
        warm.add_input(w);
        warm.add_scalar(uint64_t{0});  // fire and forget
        rt_submit_aiv_task(kWarm, warm);

        CoreTaskArgs layer2;
        layer2.add_input(x.get_ref(0), w, bias);
        layer2.add_output(y);
        layer2.add_output(TensorCreateInfo(fifo_shape, 1, DataType::UINT8));
        rt_submit_task(MixedKernels{kLinearCube, kLinearVector, kLinearVector}, layer2);
    }
}

}  // extern "C"

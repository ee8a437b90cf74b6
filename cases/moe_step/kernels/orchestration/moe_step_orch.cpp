// One MoE step of a rank (each of two ranks runs it on its own die):
//   dispatch  this rank's tokens into the peer's window (SDMA, across the link)
//   warm      this step's and the next step's expert weights into L2 (fire and forget)
//   ffn       four blocks: the peer's tokens through this step's weights
//   combine   the expert outputs back into the peer's window (SDMA)
//   gather    what the peer combined into this rank's window, into `combined`
// Tensors order the tasks of one rank (sent, combine_sent); signals in the
// windows order the ranks.
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kDispatch = 0, kWarm = 1, kFfn = 2, kCombine = 3, kGather = 4;
constexpr int kFfnBlocks = 4;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 9};
}

// tensors: tokens, weights, next_weights, expert_out, sent, combine_sent, combined;
// scalars: warm_block, this rank's CommContext
__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const uint64_t warm_block = args.scalar(0), comm = args.scalar(1);
    CoreTaskArgs dispatch;
    dispatch.add_input(args.tensor(0).ref());
    dispatch.add_output(args.tensor(4).ref());
    dispatch.add_scalar(comm);
    rt_submit_aiv_task(kDispatch, dispatch);

    CoreTaskArgs warm;
    warm.add_input(args.tensor(4).ref());
    warm.add_input(args.tensor(1).ref());
    warm.add_input(args.tensor(2).ref());
    warm.add_scalar(warm_block);
    warm.launch_spec.set_block_num(static_cast<int>(warm_block) + 1);
    rt_submit_aiv_task(kWarm, warm);

    CoreTaskArgs ffn;
    ffn.add_input(args.tensor(4).ref());
    ffn.add_input(args.tensor(1).ref());
    ffn.add_output(args.tensor(3).ref());
    ffn.add_scalar(comm);
    ffn.launch_spec.set_block_num(kFfnBlocks);
    rt_submit_aiv_task(kFfn, ffn);

    CoreTaskArgs combine;
    combine.add_input(args.tensor(3).ref());
    combine.add_output(args.tensor(5).ref());
    combine.add_scalar(comm);
    rt_submit_aiv_task(kCombine, combine);

    CoreTaskArgs gather;
    gather.add_input(args.tensor(5).ref());
    gather.add_output(args.tensor(6).ref());
    gather.add_scalar(comm);
    rt_submit_aiv_task(kGather, gather);
}

}  // extern "C"

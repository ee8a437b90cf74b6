// pfsim's own two-rank scene around deepseek_v4_flash_decode's four
// communication kernels (simpler's, compiled unchanged: func 0 dispatch_push,
// 1 dispatch_wait, 2 combine, 3 combine_wait). Each rank: the dispatch of its
// tokens to the experts' ranks, the wait for the peer's 32 expert blocks, the
// combine of expert outputs back to the tokens' ranks, the wait for the peer's
// combine. The expert FFN between them is left out: its outputs
// (recv_y_flat) and the compacted routes (recv_meta_local, recv_r_route_out)
// are the host's inputs. tests/comm/deepseek_comm_test.cc says what each
// tensor is. ds_no_push_orchestration leaves out the dispatch (the negative
// control: the peer's dispatch_wait waits for it in vain).
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kDispatchPush = 0, kDispatchWait = 1, kCombine = 2, kCombineWait = 3;
constexpr int kLocalExperts = 32;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig ds_comm_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 13 + 8};
}

// tensors: 0 indices, 1 recv_x, 2 x_norm_i8, 3 x_norm_scale, 4 weights, 5 recv_aux,
// 6 recv_route, 7 data_arrived, 8 recv_meta_local, 9 recv_r_route_out,
// 10 routed_y_buf, 11 recv_y_flat, 12 combine_arrived; scalars: 0 nt, 1 my_rank,
// 2-7 the CommContexts of recv_x, recv_aux, recv_route, data_arrived,
// routed_y_buf, combine_arrived
static void submit(const ChipTaskArgs& args, bool dispatch) {
    CoreTaskArgs push;
    push.add_input(args.tensor(0).ref());
    push.add_output(args.tensor(1).ref());
    push.add_input(args.tensor(2).ref());
    push.add_input(args.tensor(3).ref());
    push.add_input(args.tensor(4).ref());
    push.add_output(args.tensor(5).ref());
    push.add_output(args.tensor(6).ref());
    push.add_input(args.tensor(7).ref());
    for (int s = 0; s < 6; ++s) push.add_scalar(args.scalar(s));
    push.launch_spec.set_block_num(kLocalExperts);
    const PTO2TaskId pushed = dispatch ? rt_submit_aiv_task(kDispatchPush, push).task_id() : PTO2TaskId{};

    CoreTaskArgs wait;
    wait.add_input(args.tensor(0).ref());
    wait.add_input(args.tensor(7).ref());
    wait.add_scalar(args.scalar(1));
    wait.add_scalar(args.scalar(5));
    if (dispatch) wait.set_dependencies(&pushed, 1);
    const PTO2TaskId arrived = rt_submit_aiv_task(kDispatchWait, wait).task_id();

    CoreTaskArgs combine;
    combine.add_input(args.tensor(8).ref());
    combine.add_input(args.tensor(9).ref());
    combine.add_output(args.tensor(10).ref());
    combine.add_input(args.tensor(11).ref());
    combine.add_scalar(args.scalar(6));
    combine.launch_spec.set_block_num(kLocalExperts);
    combine.set_dependencies(&arrived, 1);
    const PTO2TaskId combined = rt_submit_aiv_task(kCombine, combine).task_id();

    CoreTaskArgs done;
    done.add_input(args.tensor(12).ref());
    done.add_scalar(args.scalar(1));
    done.add_scalar(args.scalar(7));
    done.set_dependencies(&combined, 1);
    rt_submit_aiv_task(kCombineWait, done);
}

__attribute__((visibility("default"))) void ds_comm_orchestration(const ChipTaskArgs& args) { submit(args, true); }
__attribute__((visibility("default"))) void ds_no_push_orchestration(const ChipTaskArgs& args) { submit(args, false); }

}  // extern "C"

// Each rank of a two-rank exchange: one task puts this rank's input into the
// peer's window and notifies the peer's signal; another, with no tensor in
// common with the first, waits for this rank's own signal and adds one to what
// the peer put into its window. Only the signal orders them (across dies).
#include <stdint.h>

#include "pto_orchestration_api.h"

constexpr int32_t kPutNotify = 0;
constexpr int32_t kWaitAdd = 1;
constexpr int32_t kSdmaGet = 2;
constexpr int32_t kAddOne = 3;

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig exchange_config(const ChipTaskArgs& args) {
    (void)args;
    return PTO2OrchestrationConfig{.expected_arg_count = 3};
}

// tensors: input, output; scalar: this rank's CommContext
__attribute__((visibility("default"))) void exchange_orchestration(const ChipTaskArgs& args) {
    CoreTaskArgs put;
    put.add_input(args.tensor(0).ref());
    put.add_scalar(args.scalar(0));
    rt_submit_aiv_task(kPutNotify, put);

    CoreTaskArgs wait;
    wait.add_output(args.tensor(1).ref());
    wait.add_scalar(args.scalar(0));
    rt_submit_aiv_task(kWaitAdd, wait);
}

// tensors: fetched, result; scalar: this rank's CommContext. The SDMA engine
// fetches the peer's window into `fetched` (the task completes when the copy
// has); the consumer, dependent through `fetched`, adds one.
__attribute__((visibility("default"))) void fetch_orchestration(const ChipTaskArgs& args) {
    CoreTaskArgs get;
    get.add_output(args.tensor(0).ref());
    get.add_scalar(args.scalar(0));
    rt_submit_aiv_task(kSdmaGet, get);

    CoreTaskArgs add;
    add.add_input(args.tensor(0).ref());
    add.add_output(args.tensor(1).ref());
    rt_submit_aiv_task(kAddOne, add);
}

// tensors: input, output; scalar: this rank's CommContext. Only the waiting
// task: nobody notifies (the negative control of exchange).
__attribute__((visibility("default"))) void lonely_orchestration(const ChipTaskArgs& args) {
    CoreTaskArgs wait;
    wait.add_output(args.tensor(1).ref());
    wait.add_scalar(args.scalar(0));
    rt_submit_aiv_task(kWaitAdd, wait);
}

}  // extern "C"

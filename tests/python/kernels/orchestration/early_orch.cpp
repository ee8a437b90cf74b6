// Early dispatch on kernel_stamp.cpp: first, when scalar(4) > 0, a blocker of
// scalar(4) blocks holding scalar(5) ticks per block index (no dependencies, not
// flagged); then a one-block AIV producer holding scalar(3) ticks, flagged
// set_allow_early_resolve(scalar(0) != 0), and a consumer of scalar(1) blocks
// that depends on it explicitly, launch_spec.set_require_sync_start(scalar(2) != 0).
// Tensors: the producer's, the consumer's and the blocker's stamps (int64, a line per block).
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 9};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    if (args.scalar(4) > 0) {
        CoreTaskArgs blocker;
        blocker.add_output(args.tensor(2).ref());
        blocker.add_scalar(args.scalar(5), uint64_t{2});
        blocker.launch_spec.set_block_num(static_cast<int>(args.scalar(4)));
        rt_submit_aiv_task(0, blocker);
    }

    CoreTaskArgs producer;
    producer.add_output(args.tensor(0).ref());
    producer.add_scalar(args.scalar(3), uint64_t{0});
    producer.set_allow_early_resolve(args.scalar(0) != 0);
    const PTO2TaskId first = rt_submit_aiv_task(0, producer).task_id();

    CoreTaskArgs consumer;
    consumer.add_output(args.tensor(1).ref());
    consumer.add_scalar(uint64_t{1}, uint64_t{1});
    consumer.launch_spec.set_block_num(static_cast<int>(args.scalar(1)));
    consumer.launch_spec.set_require_sync_start(args.scalar(2) != 0);
    PTO2TaskId deps[1] = {first};
    consumer.set_dependencies(deps, 1);
    rt_submit_aiv_task(0, consumer);
}

}  // extern "C"

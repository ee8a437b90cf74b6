// Two AIV tasks with no dependency between them (out is NO_DEP): a race.
#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 2};
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    for (int role = 0; role < 2; ++role) {
        CoreTaskArgs t;
        t.add_input(args.tensor(0).ref());
        t.add_no_dep(args.tensor(1).ref());
        t.add_scalar(role);
        rt_submit_aiv_task(0, t);
    }
}

}  // extern "C"

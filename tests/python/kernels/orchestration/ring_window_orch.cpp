// The task window and the dependency pool of simpler's runtime_env, one
// scenario per scalar(0), with scalar(1) = n tasks (kernel_stamp.cpp, each
// holding its core scalar(2) ticks and stamping its start into line i of
// tensor(0)):
//   0: n tasks, each in a scope of its own (ring 1);
//   1: n tasks in one scope (ring 1);
//   2: n scopes nested, a task in each (the third and deeper share ring 3);
//   3: n dummy producers of line i, the orchestrator waiting for each to
//      complete when scalar(2) is 1, then one dummy task depending on all;
//   4: n tasks (in the outer scope), then one on line n depending on all;
//   5, 6: task A (line 0, a scope of its own), task C (line 1, the outer
//      scope, holding scalar(2)) depending on A, explicitly (5: DEP_WAIT |
//      DEP_RETAIN, the default; 6: DEP_WAIT only), then n tasks on lines 2..,
//      each in a scope of its own.
#include <vector>

#include "pto_orchestration_api.h"

extern "C" {

__attribute__((visibility("default"))) PTO2OrchestrationConfig aicpu_orchestration_config(const ChipTaskArgs&) {
    return PTO2OrchestrationConfig{.expected_arg_count = 4};
}

static ChipTensor line(const ChipTensor& out, uint32_t i) {
    const uint32_t shape[1] = {8}, offset[1] = {8 * i};
    return out.view(shape, offset);
}

static void stamp(const ChipTensor& out, uint32_t i, uint64_t hold) {
    CoreTaskArgs task;
    task.add_output(line(out, i));
    task.add_scalar(hold, uint64_t{i});
    rt_submit_aiv_task(0, task);
}

static void nest(const ChipTensor& out, uint32_t i, uint32_t n, uint64_t hold) {
    if (i == n) return;
    PTO2_SCOPE() {
        stamp(out, i, hold);
        nest(out, i + 1, n, hold);
    }
}

__attribute__((visibility("default"))) void aicpu_orchestration_entry(const ChipTaskArgs& args) {
    const ChipTensor& out = args.tensor(0).ref();
    const uint32_t n = static_cast<uint32_t>(args.scalar(1));
    const uint64_t hold = args.scalar(2);
    switch (args.scalar(0)) {
        case 0:
            for (uint32_t i = 0; i < n; ++i) {
                PTO2_SCOPE() { stamp(out, i, hold); }
            }
            break;
        case 1:
            PTO2_SCOPE() {
                for (uint32_t i = 0; i < n; ++i) stamp(out, i, hold);
            }
            break;
        case 2:
            nest(out, 0, n, hold);
            break;
        case 3: {
            std::vector<PTO2TaskId> producers;
            for (uint32_t i = 0; i < n; ++i) {
                CoreTaskArgs producer;
                producer.add_output(line(out, i));
                producers.push_back(rt_submit_dummy_task(producer).task_id());
            }
            const uint32_t first[1] = {0};
            for (uint32_t i = 0; hold && i < n; ++i) get_tensor_data<int64_t>(line(out, i), 1, first);
            CoreTaskArgs consumer;
            consumer.set_dependencies(producers.data(), static_cast<int>(n));
            rt_submit_dummy_task(consumer);  // LINE consumer
            break;
        }
        case 4: {
            std::vector<PTO2TaskId> producers;
            for (uint32_t i = 0; i < n; ++i) {
                CoreTaskArgs producer;
                producer.add_output(line(out, i));
                producer.add_scalar(hold, uint64_t{i});
                producers.push_back(rt_submit_aiv_task(0, producer).task_id());
            }
            CoreTaskArgs consumer;
            consumer.add_output(line(out, n));
            consumer.add_scalar(hold, uint64_t{n});
            consumer.set_dependencies(producers.data(), static_cast<int>(n));
            rt_submit_aiv_task(0, consumer);
            break;
        }
        case 5:
        case 6: {
            PTO2TaskId a = PTO2TaskId::invalid();
            PTO2_SCOPE() {
                CoreTaskArgs first;
                first.add_output(line(out, 0));
                first.add_scalar(uint64_t{1}, uint64_t{0});
                a = rt_submit_aiv_task(0, first).task_id();
            }
            CoreTaskArgs holder;
            holder.add_output(line(out, 1));
            holder.add_scalar(hold, uint64_t{1});
            const DepFlags kind = args.scalar(0) == 5 ? DEP_WAIT | DEP_RETAIN : DEP_WAIT;
            holder.set_dependencies_with_kinds(&a, &kind, 1);
            rt_submit_aiv_task(0, holder);
            for (uint32_t i = 0; i < n; ++i) {
                PTO2_SCOPE() { stamp(out, 2 + i, 1); }
            }
            break;
        }
        default:
            break;
    }
}

}  // extern "C"

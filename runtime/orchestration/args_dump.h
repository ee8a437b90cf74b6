// The argument dump of simpler's --dump-args: each task's tensor and scalar
// arguments as the scheduler sees them, written as simpler's args_dump/ folder
// (args_dump.json, a manifest, and args.bin, the tensors' bytes), which its
// dump_viewer reads. docs/python.md#diagnostics describes the levels.
//
// The scheduler calls capture() as a task's first block is dispatched
// (inputs and inouts: "before_dispatch") and as the task completes (outputs
// and inouts: "after_completion"), in simulated time: what is read of GM then
// is what the kernels are about to read, and what they left.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "runtime/orchestration/task_graph.h"

namespace pfsim::rt {

// simpler's name of a data type ("FLOAT32").
const char* data_type_name(DataType t);

class ArgsDump {
public:
    // simpler's levels: PARTIAL dumps the arguments CoreTaskArgs::dump marked
    // (tasks without marks not at all); FULL every argument of every task;
    // HYBRID every argument, with tensor bytes only for the marked ones.
    enum class Level : int { PARTIAL = 1, FULL = 2, HYBRID = 3 };
    // `read(device_pointer, out, bytes)` reads GM as the scheduler sees it.
    using Read = std::function<void(uint64_t, void*, uint64_t)>;
    ArgsDump(Level level, Read read) : level_(level), read_(std::move(read)) {}

    // Every task, in submission order (its index in the graph).
    void add_task(const GraphTask& task);
    // Records task `t`'s arguments at its dispatch (completed false) or completion.
    void capture(uint32_t t, bool completed);
    // Writes DIR/args_dump.json and DIR/args.bin (the folder is made);
    // std::runtime_error naming the file that cannot be written.
    void write(const std::string& dir) const;
    size_t records() const { return records_.size(); }

private:
    struct Task {
        uint64_t id = 0;  // simpler's task id (ring << 32 | place)
        std::vector<int32_t> func_ids;
        std::vector<ChipTensor> tensors;
        std::vector<TensorArgType> types;
        std::vector<uint64_t> scalars;
        std::vector<DataType> scalar_dtypes;
        uint64_t mask = 0, ambiguous = 0;
    };
    struct Record {
        uint64_t task_id = 0;
        std::vector<int32_t> func_ids;
        uint32_t arg_index = 0;
        const char* role = "input";
        bool after = false;  // stage: after_completion, else before_dispatch
        bool scalar = false;
        DataType dtype = DataType::UINT64;
        uint64_t value = 0;  // a scalar's bits
        ChipTensor tensor{};
        bool ambiguous = false;
        uint64_t bin_offset = 0, bin_size = 0;
    };
    Level level_;
    Read read_;
    std::vector<Task> tasks_;
    std::vector<Record> records_;
    std::vector<uint8_t> bin_;
};

}  // namespace pfsim::rt

#include "runtime/orchestration/dep_gen.h"

#include <fstream>
#include <map>
#include <stdexcept>
#include <utility>

#include "runtime/orchestration/args_dump.h"

namespace pfsim::rt {
namespace {

const char* arg_type_name(TensorArgType t) {
    switch (t) {
        case TensorArgType::INPUT: return "INPUT";
        case TensorArgType::OUTPUT: return "OUTPUT";
        case TensorArgType::INOUT: return "INOUT";
        case TensorArgType::OUTPUT_EXISTING: return "OUTPUT_EXISTING";
        case TensorArgType::NO_DEP: return "NO_DEP";
    }
    return "UNKNOWN";
}

const char* source_name(GraphTask::Edge::Source s) {
    switch (s) {
        case GraphTask::Edge::Source::Explicit: return "explicit";
        case GraphTask::Edge::Source::Creator: return "creator";
        case GraphTask::Edge::Source::TensorMap: return "tensormap";
    }
    return "unknown";
}

// Quoted: ids and addresses can pass 2^53, where JavaScript readers lose digits.
std::string quoted(uint64_t v) { return "\"" + std::to_string(v) + "\""; }

// "shape": [..], "start_offset": "..", "strides": [..] of `t`, each key after `prefix`.
std::string slice(const std::string& prefix, const ChipTensor& t) {
    std::string shape, strides;
    for (uint32_t d = 0; d < t.ndims; ++d) {
        shape += (d ? "," : "") + std::to_string(t.shapes[d]);
        strides += (d ? "," : "") + std::to_string(t.strides[d]);
    }
    return ",\"" + prefix + "shape\":[" + shape + "],\"" + prefix + "start_offset\":" + quoted(t.start_offset) +
           ",\"" + prefix + "strides\":[" + strides + "]";
}

}  // namespace

void write_deps_json(const std::string& path, const TaskWindow<GraphTask>& tasks) {
    std::map<std::pair<uint64_t, int32_t>, uint64_t> ids;  // (buffer, version) -> tensor id
    std::string tensors;
    auto tensor_id = [&](const ChipTensor& t) {
        auto [it, added] = ids.emplace(std::make_pair(t.buffer.addr, t.version), ids.size() + 1);
        if (added) {
            const uint64_t size = element_size(t.dtype) ? element_size(t.dtype) : 1;
            tensors += std::string(tensors.empty() ? "" : ",") + "{\"tensor_id\":" + quoted(it->second) +
                       ",\"buffer_addr\":" + quoted(t.buffer.addr) + ",\"version\":" + std::to_string(t.version) +
                       ",\"dtype\":\"" + data_type_name(t.dtype) + "\",\"buffer_numel\":" + quoted(t.buffer.size / size) +
                       "}";
        }
        return it->second;
    };
    std::string task_rows, edges;
    for (const GraphTask& task : tasks) {
        std::string args;
        for (size_t i = 0; i < task.tensors.size(); ++i) {
            args += std::string(i ? "," : "") + "{\"idx\":" + std::to_string(i) + ",\"type\":\"" +
                    arg_type_name(task.tensor_types[i]) + "\"";
            if (task.tensor_types[i] != TensorArgType::OUTPUT) {
                const ChipTensor& t = *task.tensors[i];
                args += ",\"tensor_id\":" + quoted(tensor_id(t)) + ",\"dtype\":\"" + data_type_name(t.dtype) + "\"" +
                        slice("", t);
            }
            args += "}";
        }
        task_rows += std::string(task_rows.empty() ? "" : ",") + "{\"task_id\":" + quoted(task.ring_id) +
                     ",\"scope\":\"" + (task.manual_scope ? "manual" : "auto") +
                     "\",\"early_dispatch\":" + (task.early_resolve ? "true" : "false") + ",\"kernel_ids\":[" +
                     std::to_string(task.kernel[0]) + "," + std::to_string(task.kernel[1]) + "," +
                     std::to_string(task.kernel[2]) + "],\"block_num\":" + std::to_string(task.block_num) +
                     ",\"args\":[" + args + "]}";
        for (const GraphTask::Edge& e : task.edges) {
            std::string flags;
            if (e.flags & DEP_WAIT) flags = "\"wait\"";
            if (e.flags & DEP_RETAIN) flags += std::string(flags.empty() ? "" : ",") + "\"retain\"";
            edges += std::string(edges.empty() ? "" : ",") + "{\"pred\":" + quoted(tasks[e.pred].ring_id) +
                     ",\"succ\":" + quoted(task.ring_id) + ",\"arg\":" + std::to_string(e.arg) + ",\"source\":\"" +
                     source_name(e.source) + "\",\"flags\":[" + flags + "]";
            if (e.source == GraphTask::Edge::Source::TensorMap) {
                edges += std::string(",\"overlap\":\"") + (e.covered ? "covered" : "other") + "\"";
            }
            if (e.source != GraphTask::Edge::Source::Explicit) {
                const ChipTensor& c = *task.tensors.at(static_cast<size_t>(e.arg));
                edges += ",\"tensor_id\":" + quoted(tensor_id(c)) + ",\"consumer_dtype\":\"" + data_type_name(c.dtype) +
                         "\"" + slice("consumer_", c);
            }
            if (e.source == GraphTask::Edge::Source::TensorMap) edges += slice("producer_", *e.producer);
            edges += "}";
        }
    }
    std::ofstream out(path, std::ios::trunc);
    out << "{\"tasks\":[" << task_rows << "],\"tensors\":[" << tensors << "],\"edges\":[" << edges << "]}\n";
    if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace pfsim::rt

#include "runtime/orchestration/args_dump.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <sstream>
#include <stdexcept>

namespace pfsim::rt {

const char* data_type_name(DataType t) {
    switch (t) {
        case DataType::FLOAT32: return "FLOAT32";
        case DataType::FLOAT16: return "FLOAT16";
        case DataType::INT32: return "INT32";
        case DataType::INT16: return "INT16";
        case DataType::INT8: return "INT8";
        case DataType::UINT8: return "UINT8";
        case DataType::BFLOAT16: return "BFLOAT16";
        case DataType::INT64: return "INT64";
        case DataType::UINT64: return "UINT64";
        case DataType::UINT16: return "UINT16";
        case DataType::UINT32: return "UINT32";
        case DataType::BOOL: return "BOOL";
    }
    return "UNKNOWN";
}

namespace {

// A scalar's value in JSON, read as the type it was added as.
std::string scalar_json(DataType t, uint64_t bits) {
    std::ostringstream s;
    switch (t) {
        case DataType::FLOAT32: {
            float f;
            std::memcpy(&f, &bits, sizeof f);
            if (std::isnan(f)) return "null";
            if (std::isinf(f)) return f < 0 ? "\"-$Inf\"" : "\"$Inf\"";
            s.precision(9);
            s << f;
            std::string v = s.str();
            return v.find_first_of(".e") == std::string::npos ? v + ".0" : v;
        }
        case DataType::BOOL: return bits ? "true" : "false";
        case DataType::INT8: s << static_cast<int>(static_cast<int8_t>(bits)); break;
        case DataType::INT16: s << static_cast<int16_t>(bits); break;
        case DataType::INT32: s << static_cast<int32_t>(bits); break;
        case DataType::INT64: s << static_cast<int64_t>(bits); break;
        case DataType::UINT8: s << (bits & 0xff); break;
        case DataType::UINT16: s << (bits & 0xffff); break;
        case DataType::UINT32: s << (bits & 0xffffffffu); break;
        default: s << bits; break;
    }
    return s.str();
}

std::string dims_json(const uint32_t* d, uint32_t n) {
    std::string s = "[";
    for (uint32_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

}  // namespace

void ArgsDump::add_task(const GraphTask& g) {
    Task t;
    t.id = g.ring_id;
    for (int32_t f : g.kernel) {
        if (f != INVALID_KERNEL_ID) t.func_ids.push_back(f);
    }
    for (const ChipTensor* c : g.tensors) t.tensors.push_back(*c);
    t.types = g.tensor_types;
    t.scalars = g.scalars;
    t.scalar_dtypes = g.scalar_dtypes;
    t.mask = g.dump_mask;
    t.ambiguous = g.dump_ambiguous;
    tasks_.push_back(std::move(t));
}

void ArgsDump::capture(uint32_t index, bool completed) {
    if (index >= tasks_.size()) return;
    const Task& t = tasks_[index];
    const bool partial = level_ == Level::PARTIAL;
    if (partial && t.mask == 0) return;
    auto marked = [&](uint32_t arg) { return (t.mask >> arg & 1) != 0; };
    for (uint32_t i = 0; i < t.tensors.size(); ++i) {
        const TensorArgType type = t.types[i];
        const bool inout = type == TensorArgType::INOUT;
        const bool output = type == TensorArgType::OUTPUT || type == TensorArgType::OUTPUT_EXISTING;
        if (!inout && output != completed) continue;  // inputs before dispatch, outputs after completion
        if (partial && !marked(i)) continue;
        Record r;
        r.task_id = t.id;
        r.func_ids = t.func_ids;
        r.arg_index = i;
        r.role = inout ? "inout" : output ? "output" : "input";
        r.after = completed;
        r.dtype = t.tensors[i].dtype;
        r.tensor = t.tensors[i];
        if (level_ != Level::HYBRID || marked(i)) {
            // The view's elements in row-major order (simpler's "logical_contiguous").
            const ChipTensor& c = r.tensor;
            const uint64_t elem = element_size(c.dtype);
            const uint32_t n = c.ndims;
            r.bin_offset = bin_.size();
            if (c.numel() > 0) {
                const uint64_t row = n ? c.shapes[n - 1] : 1;
                const bool dense_rows = n == 0 || c.strides[n - 1] == 1;
                uint32_t idx[MAX_TENSOR_DIMS] = {};
                for (;;) {
                    uint64_t at = c.start_offset;
                    for (uint32_t k = 0; k + 1 < n; ++k) at += uint64_t{idx[k]} * c.strides[k];
                    const size_t old = bin_.size();
                    bin_.resize(old + row * elem);
                    if (dense_rows) {
                        read_(c.buffer.addr + at * elem, bin_.data() + old, row * elem);
                    } else {
                        for (uint64_t j = 0; j < row; ++j) {
                            read_(c.buffer.addr + (at + j * c.strides[n - 1]) * elem, bin_.data() + old + j * elem, elem);
                        }
                    }
                    int k = static_cast<int>(n) - 2;
                    for (; k >= 0 && ++idx[k] == c.shapes[k]; --k) idx[k] = 0;
                    if (k < 0) break;
                }
            }
            r.bin_size = bin_.size() - r.bin_offset;
        }
        records_.push_back(std::move(r));
    }
    if (completed) return;
    const uint32_t tensors = static_cast<uint32_t>(t.tensors.size());
    for (uint32_t s = 0; s < t.scalars.size(); ++s) {
        const uint32_t arg = tensors + s;
        if (partial && !marked(arg)) continue;
        Record r;
        r.task_id = t.id;
        r.func_ids = t.func_ids;
        r.arg_index = arg;
        r.scalar = true;
        r.dtype = s < t.scalar_dtypes.size() ? t.scalar_dtypes[s] : DataType::UINT64;
        r.value = t.scalars[s];
        r.ambiguous = level_ != Level::FULL && (t.ambiguous >> arg & 1);
        records_.push_back(std::move(r));
    }
}

void ArgsDump::write(const std::string& dir) const {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw std::runtime_error(dir + ": cannot make the argument dump's folder: " + ec.message());
    std::vector<size_t> order(records_.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const Record &x = records_[a], &y = records_[b];
        if (x.task_id != y.task_id) return x.task_id < y.task_id;
        if (x.after != y.after) return !x.after;
        return x.arg_index < y.arg_index;
    });
    size_t before = 0, inputs = 0, outputs = 0, inouts = 0;
    for (const Record& r : records_) {
        before += !r.after;
        const std::string role = r.role;
        inputs += role == "input";
        outputs += role == "output";
        inouts += role == "inout";
    }
    const std::string bin_path = dir + "/args.bin", json_path = dir + "/args_dump.json";
    {
        std::ofstream bin(bin_path, std::ios::binary | std::ios::trunc);
        bin.write(reinterpret_cast<const char*>(bin_.data()), static_cast<std::streamsize>(bin_.size()));
        if (!bin) throw std::runtime_error(bin_path + ": cannot write the argument dump's data");
    }
    std::ostringstream j;
    j << "{\n  \"run_dir\": \"" << std::filesystem::path(dir).lexically_normal().parent_path().filename().string()
      << "\",\n  \"bin_format\": {\n    \"type\": \"logical_contiguous\",\n    \"byte_order\": \"little_endian\"\n  },\n"
      << "  \"dump_args_level\": " << static_cast<int>(level_) << ",\n  \"total_args\": " << records_.size()
      << ",\n  \"before_dispatch\": " << before << ",\n  \"after_completion\": " << records_.size() - before
      << ",\n  \"input_args\": " << inputs << ",\n  \"output_args\": " << outputs << ",\n  \"inout_args\": " << inouts
      << ",\n  \"truncated_args\": 0,\n  \"dropped_records\": 0,\n  \"dropped_overwrite\": 0,\n"
      << "  \"bin_file\": " << (level_ == Level::HYBRID && bin_.empty() ? "null" : "\"args.bin\"") << ",\n  \"args\": [";
    bool first = true;
    for (size_t i : order) {
        const Record& r = records_[i];
        char id[32];
        std::snprintf(id, sizeof id, "0x%016llx", static_cast<unsigned long long>(r.task_id));
        std::string funcs = "[";
        for (size_t f = 0; f < r.func_ids.size(); ++f) funcs += (f ? ", " : "") + std::to_string(r.func_ids[f]);
        funcs += "]";
        j << (first ? "\n" : ",\n") << "    {\"task_id\": \"" << id << "\", \"func_id\": " << funcs
          << ", \"arg_index\": " << r.arg_index << ", \"role\": \"" << r.role << "\", \"stage\": \""
          << (r.after ? "after_completion" : "before_dispatch") << "\", \"kind\": \"" << (r.scalar ? "scalar" : "tensor")
          << "\", \"dtype\": \"" << data_type_name(r.dtype) << "\"";
        first = false;
        if (r.scalar) {
            j << ", \"value\": " << scalar_json(r.dtype, r.value)
              << ", \"is_contiguous\": true, \"shape\": [], \"strides\": [], \"start_offset\": 0, \"numel\": 1";
        } else {
            const ChipTensor& c = r.tensor;
            j << ", \"is_contiguous\": " << (c.is_contiguous ? "true" : "false")
              << ", \"shape\": " << dims_json(c.shapes, c.ndims) << ", \"strides\": " << dims_json(c.strides, c.ndims)
              << ", \"start_offset\": " << c.start_offset << ", \"numel\": " << c.numel();
        }
        if (r.ambiguous) j << ", \"arg_index_ambiguous\": true";
        j << ", \"bin_offset\": " << r.bin_offset << ", \"bin_size\": " << r.bin_size
          << ", \"truncated\": false, \"overwritten\": false}";
    }
    j << "\n  ]\n}\n";
    std::ofstream out(json_path, std::ios::trunc);
    out << j.str();
    if (!out) throw std::runtime_error(json_path + ": cannot write the argument dump's manifest");
}

}  // namespace pfsim::rt

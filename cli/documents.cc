#include "cli/documents.h"

#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

#include "base/json_integer.h"
#include "cli/options.h"
#include "session/schema.h"

namespace pfsim {

namespace {

// j[key] as a number, or a UsageError naming `where` (the file and the object) and the field.
double number_field(const nlohmann::json& j, const std::string& key, const std::string& where) {
    if (!j.contains(key)) throw UsageError(where + ": field " + key + ": missing");
    const nlohmann::json& v = j[key];
    if (!v.is_number()) throw UsageError(where + ": field " + key + ": expected a number, got " + v.type_name());
    return v.get<double>();
}

void flatten(const nlohmann::json& j, const std::string& prefix, std::map<std::string, double>* out) {
    for (auto it = j.begin(); it != j.end(); ++it) {
        const std::string key = prefix.empty() ? it.key() : prefix + "." + it.key();
        if (it.value().is_object()) {
            flatten(it.value(), key, out);
        } else if (it.value().is_number()) {
            (*out)[key] = it.value().get<double>();
        }
    }
}

KernelFigures from_summary(const nlohmann::json& j, const std::string& path) {
    KernelFigures k;
    const std::string command = j.value("command", "");
    if (command == "run") {
        k.name = j.value("kernel", "?") + std::string(" (prefetch ") + j.value("prefetch", "?") + ")";
        if (!j.contains("kernel_time_ns")) throw UsageError(path + ": field kernel_time_ns: missing (the run failed?)");
        k.time_ns = number_field(j, "kernel_time_ns", path);
    } else if (command == "replay") {
        k.name = "replay " + j.value("trace", "?");
        k.time_ns = number_field(j, "sim_time_ns", path);
    } else {
        throw UsageError(path + ": field command: '" + command + "' is not run or replay");
    }
    if (j.contains("lanes")) flatten(j["lanes"], "", &k.lanes);
    for (const char* block : {"l2", "gm", "sdma"}) {
        if (j.contains(block)) flatten(j[block], block, &k.counters);
    }
    return k;
}

std::vector<KernelFigures> from_check(const nlohmann::json& j, const std::string& path) {
    std::vector<KernelFigures> out;
    if (!j.contains("kernels") || !j["kernels"].is_array()) throw UsageError(path + ": field kernels: missing");
    for (size_t i = 0; i < j["kernels"].size(); ++i) {
        const auto& k = j["kernels"][i];
        if (!k.contains("time_off_ns")) continue;  // a failed kernel has no times
        const std::string where = path + ": kernels[" + std::to_string(i) + "]";
        for (const char* mode : {"off", "on"}) {
            KernelFigures f;
            f.name = k.value("name", "?") + std::string(" (prefetch ") + mode + ")";
            f.time_ns = number_field(k, std::string("time_") + mode + "_ns", where);
            f.counters["l2.hit_rate"] = number_field(k, std::string("l2_hit_rate_") + mode, where);
            out.push_back(f);
        }
    }
    return out;
}

// Calls read(event) for each trace event; an event with a field of the wrong
// type is a UsageError naming the file and the event.
template <class Read>
void each_event(const nlohmann::json& events, const std::string& path, Read read) {
    for (size_t i = 0; i < events.size(); ++i) {
        try {
            read(events[i]);
        } catch (const nlohmann::json::exception& x) {
            throw UsageError(path + ": traceEvents[" + std::to_string(i) + "]: a field has the wrong type (" +
                             x.what() + ")");
        }
    }
}

// A pfsim trace: kernel time spans the core and replay slices; lanes sum them.
KernelFigures from_trace(const nlohmann::json& j, const std::string& path) {
    std::map<int64_t, std::string> process;
    std::map<std::pair<int64_t, int64_t>, std::string> thread;
    each_event(j["traceEvents"], path, [&](const nlohmann::json& e) {
        if (e.value("ph", "") != "M") return;
        // value(), not operator[]: a const json's operator[] on a missing key is undefined (fuzz/regressions/document_fuzz).
        const std::string name = e.value("args", nlohmann::json::object()).value("name", "");
        if (e.value("name", "") == "process_name") process[json_integer_or<int64_t>(e, "pid", 0)] = name;
        if (e.value("name", "") == "thread_name") thread[{json_integer_or<int64_t>(e, "pid", 0), json_integer_or<int64_t>(e, "tid", 0)}] = name;
    });
    KernelFigures k;
    k.name = "trace " + path.substr(path.find_last_of('/') + 1);
    double first = -1, last = 0;
    each_event(j["traceEvents"], path, [&](const nlohmann::json& e) {
        if (e.value("ph", "") != "X") return;
        const std::string proc = process[json_integer_or<int64_t>(e, "pid", 0)];
        const std::string lane = thread[{json_integer_or<int64_t>(e, "pid", 0), json_integer_or<int64_t>(e, "tid", 0)}];
        const double ts = e.value("ts", 0.0) * 1e3, dur = e.value("dur", 0.0) * 1e3;
        if (proc.rfind("SDMA", 0) == 0) {
            k.counters[std::string("sdma.") + e.value("name", "") + "_requests"] += 1;
            return;
        }
        if (first < 0 || ts < first) first = ts;
        last = std::max(last, ts + dur);
        std::string key = lane;
        for (char& c : key) c = static_cast<char>(std::tolower(c));
        k.lanes[key + "_ns"] += dur;
    });
    if (first < 0) throw UsageError(path + ": the trace has no core or replay slices");
    k.time_ns = last - first;
    return k;
}

std::vector<std::string> split_csv(const std::string& line) {
    std::vector<std::string> out(1);
    bool quoted = false;
    for (char c : line) {
        if (c == '"') {
            quoted = !quoted;
        } else if (c == ',' && !quoted) {
            out.emplace_back();
        } else if (c != '\r') {
            out.back() += c;
        }
    }
    return out;
}

// The vendor profiler's op summary: one row per op.
std::vector<KernelFigures> from_profile_csv(const std::string& text, const std::string& path) {
    std::istringstream in(text);
    std::string line;
    if (!std::getline(in, line)) throw UsageError(path + ": line 1: empty profile");
    const std::vector<std::string> header = split_csv(line);
    auto column = [&](const std::string& name, bool required) -> int {
        for (size_t i = 0; i < header.size(); ++i) {
            if (header[i] == name) return static_cast<int>(i);
        }
        if (required) throw UsageError(path + ": line 1: no column '" + name + "'");
        return -1;
    };
    const int op = column("Op Name", true), duration = column("Task Duration(us)", true);
    const int block_dim = column("Block Dim", false);
    const std::pair<const char*, const char*> lanes[] = {
        {"aiv_scalar_time(us)", "scalar_ns"}, {"aic_scalar_time(us)", "scalar_ns"},
        {"aiv_mte2_time(us)", "mte2_ns"},     {"aic_mte2_time(us)", "mte2_ns"},
        {"aiv_mte3_time(us)", "mte3_ns"},     {"aiv_vec_time(us)", "vector_ns"},
        {"aic_mac_time(us)", "cube_ns"},
    };
    std::vector<KernelFigures> out;
    for (int number = 2; std::getline(in, line); ++number) {
        if (line.empty()) continue;
        const std::vector<std::string> cells = split_csv(line);
        auto number_at = [&](int col, const char* what) {
            if (col < 0 || col >= static_cast<int>(cells.size())) {
                throw UsageError(path + ": line " + std::to_string(number) + ": no value for " + what);
            }
            try {
                size_t used = 0;
                const double v = std::stod(cells[col], &used);
                if (used != cells[col].size()) throw std::invalid_argument("trailing text");
                if (v >= 0 && std::isfinite(v)) return v;
            } catch (const std::exception&) {
                throw UsageError(path + ": line " + std::to_string(number) + ": " + what + ": '" + cells[col] +
                                 "' is not a number");
            }
            // Times and block counts of a profile are never negative (nor infinite).
            throw UsageError(path + ": line " + std::to_string(number) + ": " + what + ": '" + cells[col] +
                             "' is not a non-negative number");
        };
        KernelFigures k;
        if (op >= static_cast<int>(cells.size())) throw UsageError(path + ": line " + std::to_string(number) + ": no Op Name");
        k.name = cells[op];
        k.time_ns = number_at(duration, "Task Duration(us)") * 1e3;
        const double cores = block_dim >= 0 ? number_at(block_dim, "Block Dim") : 1;
        for (const auto& [col_name, lane] : lanes) {
            const int col = column(col_name, false);
            if (col >= 0 && col < static_cast<int>(cells.size()) && !cells[col].empty() && cells[col] != "N/A") {
                k.lanes[lane] += number_at(col, col_name) * 1e3 * cores;  // per-core averages -> sums
            }
        }
        out.push_back(k);
    }
    if (out.empty()) throw UsageError(path + ": no op rows");
    return out;
}

// The vendor profiler's trace JSON: op slices named by op, with their durations.
std::vector<KernelFigures> from_profile_trace(const nlohmann::json& events, const std::string& path) {
    std::map<std::string, KernelFigures> ops;
    each_event(events, path, [&](const nlohmann::json& e) {
        if (e.value("ph", "") != "X" || !e.contains("args") || !e["args"].contains("Task Type")) return;
        KernelFigures& k = ops[e.value("name", "?")];
        k.name = e.value("name", "?");
        k.time_ns += e.value("dur", 0.0) * 1e3;
    });
    std::vector<KernelFigures> out;
    for (auto& [name, k] : ops) out.push_back(k);
    return out;
}

// The document in `j`, read from `path`; nlohmann::json exceptions on a field of
// the wrong type.
Document read_json_document(const std::string& path, const nlohmann::json& j) {
    Document d;
    d.path = path;
    if (j.is_object() && j.contains("schema")) {
        const std::string schema = j["schema"].is_string() ? j["schema"].get<std::string>() : "";
        if (schema == kSummarySchema) {
            d.kind = "summary";
            d.kernels.push_back(from_summary(j, path));
        } else if (schema == "pfsim.check/1") {
            d.kind = "check";
            d.kernels = from_check(j, path);
        } else {
            throw UsageError(path + ": field schema: '" + schema + "' is not supported (pfsim reads " +
                             kSummarySchema + " and pfsim.check/1)");
        }
        d.raw = j;
        return d;
    }
    if (j.is_object() && j.contains("traceEvents") && j["traceEvents"].is_array()) {
        d.kind = "trace";
        d.kernels.push_back(from_trace(j, path));
        return d;
    }
    if (j.is_array()) {  // the vendor profiler writes a bare event array
        d.kind = "profile";
        d.kernels = from_profile_trace(j, path);
        if (!d.kernels.empty()) return d;
    }
    throw UsageError(path + ": not a pfsim summary, check report, trace or profile (no schema field)");
}

}  // namespace

Document read_document(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UsageError(path + ": cannot read");
    // Read in blocks, looking at the first: an endless or binary input (a
    // device, a pipe of garbage) is refused at once instead of filling memory.
    const bool csv = path.size() > 4 && path.substr(path.size() - 4) == ".csv";
    constexpr uint64_t kMaxBytes = uint64_t{4} << 30;  // above the largest trace pfsim writes (trace.max_bytes)
    std::string text;
    std::vector<char> block(1 << 20);
    while (in.read(block.data(), static_cast<std::streamsize>(block.size())) || in.gcount() > 0) {
        const bool first = text.empty();
        text.append(block.data(), static_cast<size_t>(in.gcount()));
        if (first) {
            const size_t at = text.find_first_not_of(" \t\r\n");
            const bool binary = text.find('\0') != std::string::npos;
            if (binary || (!csv && at != std::string::npos && text[at] != '{' && text[at] != '[')) {
                throw UsageError(path + ": not a pfsim summary, check report, trace or profile (" +
                                 (binary ? "binary data" : "not a JSON object or array") + ")");
            }
        }
        if (text.size() > kMaxBytes) throw UsageError(path + ": larger than 4 GiB: not a document pfsim writes or reads");
    }
    if (in.bad()) throw UsageError(path + ": cannot read");
    if (csv) {
        Document d;
        d.path = path;
        d.kind = "profile";
        d.kernels = from_profile_csv(text, path);
        return d;
    }
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(text);
    } catch (const nlohmann::json::parse_error& e) {
        throw UsageError(path + ": byte " + std::to_string(e.byte) + ": not valid JSON (" + e.what() + ")");
    } catch (const nlohmann::json::exception& e) {  // a number beyond double's range
        throw UsageError(path + ": not valid JSON (" + e.what() + ")");
    }
    Document d;
    read_fields(path, [&] { d = read_json_document(path, j); });
    return d;
}

void read_fields(const std::string& path, const std::function<void()>& read) {
    try {
        read();
    } catch (const nlohmann::json::exception& e) {
        throw UsageError(path + ": a field has the wrong type (" + e.what() + ")");
    }
}

}  // namespace pfsim

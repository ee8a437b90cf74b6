// Reading what `pfsim diff` and `pfsim report` compare: pfsim summaries (run,
// replay), check reports, pfsim traces, and onboard profiles (the vendor
// profiler's op-summary CSV or trace JSON), all normalised to one shape.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pfsim {

struct KernelFigures {
    std::string name;
    double time_ns = 0;
    std::map<std::string, double> lanes;     // busy time per lane, summed over cores
    std::map<std::string, double> counters;  // "l2.hits", "gm.read_bytes", ...
};

struct Document {
    std::string path;
    std::string kind;  // "summary", "check", "trace", "profile"
    std::vector<KernelFigures> kernels;
    nlohmann::json raw;  // the summary or check report itself (empty for traces and profiles)
};

// Reads and normalises `path`; throws UsageError naming the file and the
// position (byte, line or field) at fault.
Document read_document(const std::string& path);

// Runs `read` over fields of the document read from `path`; a field of another
// type than the format's (a nlohmann::json exception) becomes a UsageError
// naming the file.
void read_fields(const std::string& path, const std::function<void()>& read);

}  // namespace pfsim

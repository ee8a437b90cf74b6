// pfsim report A [B] --html FILE: a self-contained page (inline SVG, no network
// fetches) with a timeline overview and plots of the summaries or check reports.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/documents.h"
#include "cli/options.h"
#include "cli/plot.h"
#include "cli/text.h"

namespace pfsim {

namespace {

std::vector<double> series(const nlohmann::json& raw, const char* name) {
    if (!raw.is_object() || !raw.contains("series") || !raw["series"].contains(name)) return {};
    return raw["series"][name].get<std::vector<double>>();
}

}  // namespace

int cmd_report(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {}, {"--html"});
    if (o.positional.empty() || o.positional.size() > 2) throw UsageError("report takes one or two files: A [B]");
    const std::string out = value_of(o, "--html", "");
    if (out.empty()) throw UsageError("report needs --html FILE");
    std::vector<Document> docs;
    for (const std::string& p : o.positional) docs.push_back(read_document(user_path(p)));

    std::ostringstream body;
    int plots = 0;
    // Time per kernel (prefetch off and on for check reports; A and B otherwise).
    std::vector<Bar> times;
    for (size_t d = 0; d < docs.size(); ++d) {
        for (const KernelFigures& k : docs[d].kernels) {
            const bool on = k.name.find("(prefetch on)") != std::string::npos;
            times.push_back({(docs.size() > 1 ? std::string(d ? "B: " : "A: ") : "") + k.name, k.time_ns / 1e3,
                             static_cast<int>(d * 2 + (on ? 1 : 0))});
        }
    }
    body << bar_chart("time", "Time per kernel", "us", times);
    ++plots;
    // Timeline overview: where the time went, per lane.
    std::vector<Bar> lanes;
    for (size_t d = 0; d < docs.size(); ++d) {
        for (const KernelFigures& k : docs[d].kernels) {
            for (const auto& [lane, ns] : k.lanes) {
                lanes.push_back({std::string(docs.size() > 1 ? (d ? "B " : "A ") : "") + lane.substr(0, lane.size() - 3),
                                 ns / 1e3, static_cast<int>(d)});
            }
        }
    }
    if (!lanes.empty()) {
        body << bar_chart("lanes", "Timeline overview: busy time per lane, summed over cores", "us", lanes);
        ++plots;
    }
    // Counters over time, from run and replay summaries.
    std::vector<Line> hit, bandwidth;
    for (size_t d = 0; d < docs.size(); ++d) {
        const std::vector<double> t = series(docs[d].raw, "t_ns");
        if (t.empty()) continue;
        const std::string tag = docs.size() > 1 ? (d ? "B " : "A ") : "";
        hit.push_back({tag + "L2 hit rate", t, series(docs[d].raw, "l2_hit_rate"), static_cast<int>(d)});
        bandwidth.push_back({tag + "GM read", t, series(docs[d].raw, "gm_read_gbps"), static_cast<int>(d * 3)});
        bandwidth.push_back({tag + "GM write", t, series(docs[d].raw, "gm_write_gbps"), static_cast<int>(d * 3 + 1)});
        bandwidth.push_back({tag + "SDMA", t, series(docs[d].raw, "sdma_gbps"), static_cast<int>(d * 3 + 2)});
    }
    if (!hit.empty()) {
        body << line_chart("l2", "L2 hit rate over time", hit, "% over simulated time");
        body << line_chart("bandwidth", "GM and SDMA bandwidth over time", bandwidth, "GB/s over simulated time");
        plots += 2;
    }

    std::ostringstream files;
    files << "<table>";
    for (size_t d = 0; d < docs.size(); ++d) {
        files << "<tr><td>" << (d ? "B" : "A") << "</td><td>" << markup_escape(docs[d].path) << "</td><td>"
              << docs[d].kind << "</td></tr>";
    }
    files << "</table>\n";
    std::ofstream html(user_path(out));
    if (!html) throw UsageError(out + ": cannot write the report");
    html << html_page("pfsim report", files.str() + body.str());
    std::printf("%s: %d plots\n", out.c_str(), plots);
    return 0;
}

}  // namespace pfsim

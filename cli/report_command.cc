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
#include "cli/text.h"

namespace pfsim {

namespace {

const char* kColors[] = {"#4477aa", "#ee6677", "#228833", "#ccbb44", "#66ccee", "#aa3377"};

std::string num(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.4g", v);
    return b;
}

struct Bar {
    std::string label;
    double value;
    int color;
};

// Horizontal bars, one per entry, scaled to the largest.
std::string bar_chart(const std::string& id, const std::string& title, const std::string& unit,
                      const std::vector<Bar>& bars) {
    const int row = 22, left = 260, width = 420;
    const int height = static_cast<int>(bars.size()) * row + 40;
    double top = 0;
    for (const Bar& b : bars) top = std::max(top, b.value);
    std::ostringstream os;
    os << "<h2>" << markup_escape(title) << "</h2>\n<svg data-plot=\"" << id << "\" width=\"" << left + width + 120
       << "\" height=\"" << height << "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">\n";
    for (size_t i = 0; i < bars.size(); ++i) {
        const int y = 20 + static_cast<int>(i) * row;
        const double w = top > 0 ? bars[i].value / top * width : 0;
        os << "<text x=\"" << left - 6 << "\" y=\"" << y + 14 << "\" text-anchor=\"end\">" << markup_escape(bars[i].label) << "</text>"
           << "<rect x=\"" << left << "\" y=\"" << y << "\" width=\"" << num(w) << "\" height=\"" << row - 6
           << "\" fill=\"" << kColors[bars[i].color % 6] << "\"/>"
           << "<text x=\"" << left + w + 6 << "\" y=\"" << y + 14 << "\">" << num(bars[i].value) << " " << unit << "</text>\n";
    }
    os << "</svg>\n";
    return os.str();
}

struct Line {
    std::string label;
    std::vector<double> x, y;
    int color;
};

// Lines over time on shared axes.
std::string line_chart(const std::string& id, const std::string& title, const std::string& unit,
                       const std::vector<Line>& lines) {
    const int left = 60, top = 20, width = 640, height = 220;
    double xmin = 1e300, xmax = -1e300, ymax = 0;
    for (const Line& l : lines) {
        for (double v : l.x) xmin = std::min(xmin, v), xmax = std::max(xmax, v);
        for (double v : l.y) ymax = std::max(ymax, v);
    }
    if (xmax <= xmin) xmax = xmin + 1;
    if (ymax <= 0) ymax = 1;
    std::ostringstream os;
    os << "<h2>" << markup_escape(title) << "</h2>\n<svg data-plot=\"" << id << "\" width=\"" << left + width + 200
       << "\" height=\"" << top + height + 40 << "\" xmlns=\"http://www.w3.org/2000/svg\" font-family=\"sans-serif\" font-size=\"12\">\n"
       << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << width << "\" height=\"" << height
       << "\" fill=\"none\" stroke=\"#999\"/>\n"
       << "<text x=\"" << left - 6 << "\" y=\"" << top + 10 << "\" text-anchor=\"end\">" << num(ymax) << "</text>"
       << "<text x=\"" << left - 6 << "\" y=\"" << top + height << "\" text-anchor=\"end\">0</text>"
       << "<text x=\"" << left << "\" y=\"" << top + height + 16 << "\">" << num(xmin / 1e3) << " us</text>"
       << "<text x=\"" << left + width << "\" y=\"" << top + height + 16 << "\" text-anchor=\"end\">" << num(xmax / 1e3)
       << " us</text><text x=\"" << left + width / 2 << "\" y=\"" << top + height + 32 << "\" text-anchor=\"middle\">"
       << markup_escape(unit) << " over simulated time</text>\n";
    for (size_t k = 0; k < lines.size(); ++k) {
        const Line& l = lines[k];
        os << "<polyline fill=\"none\" stroke-width=\"1.5\" stroke=\"" << kColors[l.color % 6] << "\" points=\"";
        for (size_t i = 0; i < l.x.size() && i < l.y.size(); ++i) {
            os << num(left + (l.x[i] - xmin) / (xmax - xmin) * width) << "," << num(top + height - l.y[i] / ymax * height) << " ";
        }
        os << "\"/><text x=\"" << left + width + 10 << "\" y=\"" << top + 14 + 16 * static_cast<int>(k) << "\" fill=\""
           << kColors[l.color % 6] << "\">" << markup_escape(l.label) << "</text>\n";
    }
    os << "</svg>\n";
    return os.str();
}

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
        body << line_chart("l2", "L2 hit rate over time", "%", hit);
        body << line_chart("bandwidth", "GM and SDMA bandwidth over time", "GB/s", bandwidth);
        plots += 2;
    }

    std::ofstream html(user_path(out));
    if (!html) throw UsageError(out + ": cannot write the report");
    html << "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>pfsim report</title>\n"
         << "<style>body{font-family:sans-serif;margin:24px;max-width:1000px}h2{font-size:16px;margin-top:28px}"
         << "td{padding:2px 10px}</style></head><body>\n<h1>pfsim report</h1>\n<table>";
    for (size_t d = 0; d < docs.size(); ++d) {
        html << "<tr><td>" << (d ? "B" : "A") << "</td><td>" << markup_escape(docs[d].path) << "</td><td>" << docs[d].kind << "</td></tr>";
    }
    html << "</table>\n" << body.str()
         << "<script>document.title = 'pfsim report: ' + document.querySelectorAll('svg[data-plot]').length + ' plots';"
         << "</script>\n</body></html>\n";
    std::printf("%s: %d plots\n", out.c_str(), plots);
    return 0;
}

}  // namespace pfsim

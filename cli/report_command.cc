// pfsim report A [B] --html FILE: a self-contained page (inline SVG, no network
// fetches) with a timeline overview and plots of the summaries or check reports.
#include <algorithm>
#include <cstdio>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "base/json_integer.h"
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

std::string ns_cells(const nlohmann::json& q) {
    std::string cells;
    for (size_t i = 0; i < 5; ++i) {
        char b[32];
        std::snprintf(b, sizeof b, "%.2f", i < q.size() ? q[i].get<double>() / 1e3 : 0.0);
        cells += "<td>" + std::string(q.size() == 5 ? b : "-") + "</td>";
    }
    return cells;
}

// The sanitizer's findings and the advisor's sites, what-ifs and advice of
// one run summary (--sanitize, --advise), under `name`.
std::string insight_section(const std::string& name, const nlohmann::json& run, int* plots) {
    std::ostringstream os;
    const std::string id = std::to_string(*plots);
    if (run.contains("sanitizer")) {
        const nlohmann::json& s = run["sanitizer"];
        os << "<h2>Sanitizer: " << markup_escape(name) << "</h2><p>" << json_integer_or<int64_t>(s, "errors", 0) << " errors, "
           << json_integer_or<int64_t>(s, "warnings", 0) << " warnings, " << json_integer_or<int64_t>(s, "infos", 0) << " infos</p>";
        if (!s.value("findings", nlohmann::json::array()).empty()) {
            os << "<table><tr><th>severity</th><th>kind</th><th>site</th><th>core</th><th>times</th><th>what</th></tr>";
            for (const nlohmann::json& f : s["findings"]) {
                os << "<tr><td>" << markup_escape(f.value("severity", "")) << "</td><td>" << markup_escape(f.value("kind", ""))
                   << "</td><td>" << markup_escape(f["site"].value("where", "")) << "</td><td>"
                   << markup_escape(f["site"].value("core", "")) << "</td><td>" << json_integer_or<int64_t>(f, "count", 1) << "</td><td>"
                   << markup_escape(f.value("what", "")) << "</td></tr>";
            }
            os << "</table>\n";
        }
    }
    if (run.contains("advisor")) {
        const nlohmann::json& a = run["advisor"];
        std::vector<Bar> lines;
        for (const nlohmann::json& s : a["sites"]) {
            const std::string site = s.value("where", "?");
            lines.push_back({site + " filled", s.value("lines_filled", 0.0), 0});
            lines.push_back({site + " useful", s.value("useful", 0.0), 1});
            lines.push_back({site + " late", s.value("late", 0.0), 2});
            lines.push_back({site + " evicted unused", s.value("evicted_unused", 0.0), 3});
            lines.push_back({site + " resident already", s.value("lines_resident", 0.0), 4});
        }
        if (!lines.empty()) {
            os << bar_chart("advisor-lines-" + id, "Advisor: " + name + ": lines per prefetch site", "lines", lines);
            ++*plots;
            os << "<table><tr><th>site</th><th>accuracy</th><th>lateness</th><th>pollution</th>"
                  "<th colspan=5>post to line in L2, us (p10 p25 p50 p75 p90)</th>"
                  "<th colspan=5>line in L2 to first use, us (p10 p25 p50 p75 p90; negative: late)</th></tr>";
            for (const nlohmann::json& s : a["sites"]) {
                char f[96];
                std::snprintf(f, sizeof f, "<td>%.2f</td><td>%.2f</td><td>%.4f</td>", s.value("accuracy", 0.0),
                              s.value("lateness", 0.0), s.value("pollution", 0.0));
                os << "<tr><td>" << markup_escape(s.value("where", "?")) << "</td>" << f
                   << ns_cells(s.value("fill_ns_quantiles", nlohmann::json::array()))
                   << ns_cells(s.value("lead_ns_quantiles", nlohmann::json::array())) << "</tr>";
            }
            os << "</table>\n";
        }
        if (a.contains("load_sites") && !a["load_sites"].empty()) {
            os << "<table><tr><th>load site</th><th>loads</th><th>lines</th><th>misses</th><th>stall, us</th>"
                  "<th>covered by (prefetch site: lines)</th></tr>";
            for (const nlohmann::json& l : a["load_sites"]) {
                std::string covered;
                const nlohmann::json by_site = l.value("covered_by", nlohmann::json::object());
                for (const auto& [by, n] : by_site.items()) {
                    covered += (covered.empty() ? "" : ", ") + by + ": " + n.dump();
                }
                char f[160];
                std::snprintf(f, sizeof f, "<td>%.0f</td><td>%.0f</td><td>%.0f</td><td>%.2f</td>", l.value("loads", 0.0),
                              l.value("lines", 0.0), l.value("misses", 0.0), l.value("stall_ns", 0.0) / 1e3);
                os << "<tr><td>" << markup_escape(l.value("where", "?")) << "</td>" << f << "<td>"
                   << markup_escape(covered.empty() ? "-" : covered) << "</td></tr>";
            }
            os << "</table>\n";
        }
        if (a.contains("what_if") && a["what_if"].is_object()) {
            const nlohmann::json& w = a["what_if"];
            os << bar_chart("advisor-whatif-" + id, "Advisor: " + name + ": measured what-ifs", "us",
                            {{"prefetch off", w.value("prefetch_off_ns", 0.0) / 1e3, 0},
                             {"this run", w.value("this_run_ns", 0.0) / 1e3, 1},
                             {"ideal: every core access an L2 hit", w.value("ideal_ns", 0.0) / 1e3, 2}});
            ++*plots;
        }
        os << "<ol>";
        for (const nlohmann::json& x : a.value("advice", nlohmann::json::array())) {
            os << "<li>" << markup_escape(x.value("where", "?")) << ": " << markup_escape(x.value("message", "")) << "</li>";
        }
        os << "</ol>\n";
    }
    return os.str();
}

}  // namespace

int cmd_report(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {}, {"--html"});
    if (o.positional.empty() || o.positional.size() > 2) throw UsageError("report takes one or two files: A [B]");
    const std::string out = value_of(o, "--html", "");
    if (out.empty()) throw UsageError("report needs --html FILE");
    check_writable(out);
    std::vector<std::pair<std::string, std::string>> inputs;
    for (const std::string& p : o.positional) inputs.push_back({"a compared document", user_path(p)});
    refuse_overwriting_an_input(o, "--html", out, inputs);
    std::vector<Document> docs;
    for (const std::string& p : o.positional) docs.push_back(read_document(user_path(p)));

    // The report reads more of each document than read_document checks: a field
    // of the wrong type there is bad input too, naming its file.
    auto from_document = [&](size_t d, const std::function<void()>& read) { read_fields(docs[d].path, read); };
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
        from_document(d, [&] {
            const std::vector<double> t = series(docs[d].raw, "t_ns");
            if (t.empty()) return;
            const std::string tag = docs.size() > 1 ? (d ? "B " : "A ") : "";
            hit.push_back({tag + "L2 hit rate", t, series(docs[d].raw, "l2_hit_rate"), static_cast<int>(d)});
            bandwidth.push_back({tag + "GM read", t, series(docs[d].raw, "gm_read_gbps"), static_cast<int>(d * 3)});
            bandwidth.push_back({tag + "GM write", t, series(docs[d].raw, "gm_write_gbps"), static_cast<int>(d * 3 + 1)});
            bandwidth.push_back({tag + "SDMA", t, series(docs[d].raw, "sdma_gbps"), static_cast<int>(d * 3 + 2)});
        });
    }
    if (!hit.empty()) {
        body << line_chart("l2", "L2 hit rate over time", hit, "% over simulated time");
        body << line_chart("bandwidth", "GM and SDMA bandwidth over time", bandwidth, "GB/s over simulated time");
        plots += 2;
    }

    // What --sanitize and --advise found, for a run summary or each row of a check report.
    for (size_t d = 0; d < docs.size(); ++d) {
        from_document(d, [&] {
            const nlohmann::json& raw = docs[d].raw;
            const std::string tag = docs.size() > 1 ? (d ? "B: " : "A: ") : "";
            if (raw.is_object() && raw.contains("kernels") && raw["kernels"].is_array()) {
                for (const nlohmann::json& row : raw["kernels"]) {
                    if (row.is_object()) body << insight_section(tag + row.value("name", "?"), row, &plots);
                }
            } else if (raw.is_object()) {
                body << insight_section(tag + raw.value("kernel", "?"), raw, &plots);
            }
        });
    }

    std::ostringstream files;
    files << "<table>";
    for (size_t d = 0; d < docs.size(); ++d) {
        files << "<tr><td>" << (d ? "B" : "A") << "</td><td>" << markup_escape(docs[d].path) << "</td><td>"
              << docs[d].kind << "</td></tr>";
    }
    files << "</table>\n";
    write_output(out, html_page("pfsim report", files.str() + body.str()));
    std::printf("%s: %d plots\n", out.c_str(), plots);
    return 0;
}

}  // namespace pfsim

// pfsim calibrate: microbenchmarks on the model against the published a2a3
// figures (shared a2a3-hardware.md), each with a tolerance and a verdict.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "base/atomic_file.h"
#include "calibration/table.h"
#include "cli/children.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/plot.h"
#include "loader/embedded_files.h"
#include "model/config/params.h"

namespace pfsim {

namespace {

// A run of the table: a shipped case with its arguments, sets and warm-up, or
// a replay of the trace `trace_file` writes for its name.
api::RunSpec spec_of(const calibration::FigureRun& r, const std::function<std::string(const std::string&)>& trace_file) {
    api::RunSpec spec;
    if (!r.trace.empty()) {
        spec.is_replay = true;
        spec.replay.file = trace_file(r.trace);
        spec.replay.label = spec.replay.file;
        return spec;
    }
    spec.run.target = api::resolve_target(r.target);
    spec.run.kernel_args = r.args;
    spec.config.sets = r.sets;
    spec.run.warmup = r.warmup;
    return spec;
}

// `spec` on the command's configuration: its preset and files, the table's
// sets, then the command's --set values.
api::RunSpec on_config(api::RunSpec spec, const CommonOptions& o) {
    api::ConfigChoice config = config_choice(o);
    config.sets.insert(config.sets.begin(), spec.config.sets.begin(), spec.config.sets.end());
    spec.config = config;
    return spec;
}

// The table: --table FILE, or the one built in (calibration/figures.toml).
std::vector<calibration::Figure> read_figures(const std::string& file) {
    std::string text, name = file;
    if (file.empty()) {
        for (const EmbeddedFile& f : embedded_files("calibration")) {
            if (std::string(f.path) == "figures.toml") text.assign(f.content, f.size);
        }
        if (text.empty()) throw std::runtime_error("pfsim was built without calibration/figures.toml");
        name = "calibration/figures.toml (built in)";
    } else if (!read_whole_file(file, &text)) {
        throw UsageError("--table: cannot read '" + file + "'");
    }
    try {
        return calibration::read_table(text, name);
    } catch (const calibration::TableError& e) {
        throw UsageError(e.what());
    }
}

std::string write_trace(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

// Curves for the page: GM bandwidth against transfer size from 1, 8 and 48
// cores, and the second-pass L2 hit rate against the working-set size.
std::string curves(const CommonOptions& o, unsigned jobs, const std::function<std::string(const std::string&)>& trace) {
    const std::vector<uint64_t> sizes = {64, 512, 4096, 16384, 65536, 1 << 20, 64 << 20};
    const std::vector<uint64_t> cores = {1, 8, 48};
    const std::vector<uint64_t> sets = {32, 64, 128, 160, 192, 224, 256, 384, 512};
    std::vector<api::RunSpec> runs;
    // Enough transfers for a steady rate, at most 64 MiB per core and 512 MiB in
    // all (the case's region is written on the host): 48 cores stop at 1 MiB.
    auto bytes_per_core = [](uint64_t cores, uint64_t s) {
        return std::min<uint64_t>({std::max<uint64_t>(s * 16, 256 << 10), 64 << 20, (512 << 20) / cores}) / s * s;
    };
    for (uint64_t c : cores) {
        for (uint64_t s : sizes) {
            const uint64_t bytes = bytes_per_core(c, s);
            if (bytes == 0) continue;
            calibration::FigureRun r;
            r.target = "calib_stream";
            r.args = {"cores=" + std::to_string(c), "size=" + std::to_string(s), "bytes=" + std::to_string(bytes)};
            runs.push_back(on_config(spec_of(r, nullptr), o));
        }
    }
    for (uint64_t mib : sets) {
        calibration::FigureRun r;
        r.trace = "working_set:" + std::to_string(mib);
        runs.push_back(on_config(spec_of(r, trace), o));
    }
    const std::vector<ChildRun> r = run_children(runs, jobs);
    std::vector<Line> bandwidth;
    size_t k = 0;
    for (size_t ci = 0; ci < cores.size(); ++ci) {
        Line l{std::to_string(cores[ci]) + (cores[ci] == 1 ? " core" : " cores"), {}, {}, static_cast<int>(ci)};
        for (uint64_t s : sizes) {
            if (bytes_per_core(cores[ci], s) == 0) continue;
            const api::RunResult c = run_result(r[k++]);
            if (!c.ran || c.timed_pass.is_null()) continue;
            l.x.push_back(std::log2(static_cast<double>(s)));
            l.y.push_back(c.timed_pass["gbps"].get<double>());
        }
        bandwidth.push_back(l);
    }
    Line hits{"second-pass hit rate", {}, {}, 2};
    for (uint64_t mib : sets) {
        const api::RunResult c = run_result(r[k++]);
        if (!c.ran) continue;
        const double h = c.counters["l2"]["hits"].get<double>(), m = c.counters["l2"]["misses"].get<double>();
        hits.x.push_back(static_cast<double>(mib));
        hits.y.push_back(100.0 * 2 * h / (h + m));
    }
    return line_chart("gm_bandwidth", "GM read bandwidth (GB/s) against transfer size", bandwidth,
                      "log2 of the transfer size in bytes (6 = 64 B, 26 = 64 MiB)", "", 1) +
           line_chart("working_set", "L2 hit rate (%) of a second pass over a working set", {hits},
                      "working set in MiB (L2: 192 MiB)", "MiB", 1);
}

}  // namespace

int cmd_calibrate(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {}, {"--only", "--jobs", "--html", "--table"});
    const Config cfg = resolve_config(o);
    const std::vector<calibration::Figure> figures = read_figures(value_of(o, "--table", ""));
    const std::string dir = make_temporary_folder("pfsim-calibrate");
    struct RemoveDir {  // on every way out: a bad --only, an interrupted child run
        const std::string& dir;
        ~RemoveDir() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } remove_dir{dir};
    // The traces the table replays, each written once, by name.
    std::map<std::string, std::string> trace_files;
    auto trace_file = [&](const std::string& name) {
        const auto known = trace_files.find(name);
        if (known != trace_files.end()) return known->second;
        std::string text;
        if (name.rfind("working_set:", 0) == 0) {
            // Reads W MiB twice; the second pass hits iff W fits in the L2.
            const std::string mib_text = name.substr(12);
            const bool digits = !mib_text.empty() && mib_text.size() < 7 &&
                                std::all_of(mib_text.begin(), mib_text.end(), [](char c) { return c >= '0' && c <= '9'; });
            const uint64_t mib = digits ? std::stoull(mib_text) : 0;
            if (mib == 0) throw UsageError("trace '" + name + "': working_set:MIB takes a size in MiB from 1");
            std::ostringstream t;
            for (int pass = 0; pass < 2; ++pass) {
                for (uint64_t a = 0; a < (mib << 20); a += 1 << 20) t << "R 0x" << std::hex << a << std::dec << " 1048576\n";
            }
            text = t.str();
        } else if (name == "same_line") {
            for (int i = 0; i < 2000; ++i) text += "R 0x1000 64\n";
        } else if (name == "pointer_chase") {  // traces/examples/pointer_chase.trace, built in
            for (const EmbeddedFile& f : embedded_files("traces")) {
                if (std::string(f.path) == "examples/pointer_chase.trace") text.assign(f.content, f.size);
            }
            if (text.empty()) throw std::runtime_error("pfsim was built without traces/examples/pointer_chase.trace");
        } else {
            throw UsageError("trace '" + name + "': unknown (known: working_set:MIB, same_line, pointer_chase)");
        }
        return trace_files[name] = write_trace(dir, name + ".trace", text);
    };
    auto parameter = [](const std::string& key, Kind kind) {
        const ParamSpec* spec = find_param(key);
        if (!spec || spec->kind != kind) {
            throw std::runtime_error("'" + key + "' is not a parameter of kind " + kind_name(kind) + " (pfsim config lists them)");
        }
        return key;
    };
    const calibration::Inputs config_values{
        nullptr, [&](const std::string& key) { return static_cast<double>(cfg.time(parameter(key, Kind::Time))); },
        [&](const std::string& key) { return cfg.frequency(parameter(key, Kind::Frequency)); }};
    std::set<std::string> only;
    std::stringstream list(value_of(o, "--only", ""));
    for (std::string id; std::getline(list, id, ',');) {
        bool known = false;
        for (const calibration::Figure& f : figures) known |= f.id == id;
        if (!known) throw UsageError("--only: unknown figure '" + id + "'");
        only.insert(id);
    }
    // Each distinct run once, however many figures read it.
    std::vector<api::RunSpec> runs;
    std::map<std::string, size_t> run_index;  // by the spec's JSON
    std::vector<const calibration::Figure*> chosen;
    std::vector<std::pair<double, double>> published;  // each chosen figure's low and high
    std::vector<std::vector<size_t>> item_runs;
    for (const calibration::Figure& f : figures) {
        if (!only.empty() && !only.count(f.id)) continue;
        chosen.push_back(&f);
        try {
            published.emplace_back(f.low.evaluate(config_values), f.high.evaluate(config_values));
        } catch (const std::exception& e) {
            throw UsageError(f.where + ": figure " + f.id + ": its bounds: " + e.what());
        }
        item_runs.emplace_back();
        for (const calibration::FigureRun& run : f.runs) {
            const api::RunSpec r = on_config(spec_of(run, trace_file), o);
            const auto it = run_index.emplace(api::to_json(r).dump(), runs.size()).first;
            if (it->second == runs.size()) runs.push_back(r);
            item_runs.back().push_back(it->second);
        }
    }
    const unsigned jobs = jobs_option(o);
    check_writable(value_of(o, "--html", ""));
    const std::vector<ChildRun> results = run_children(runs, jobs);
    nlohmann::json rows = nlohmann::json::array();
    int failed = 0, gaps = 0;
    if (!o.json) {
        std::printf("%-22s %12s %-10s %-22s %8s  %s\n", "figure", "simulated", "unit", "published", "ratio", "verdict");
    }
    for (size_t n = 0; n < chosen.size(); ++n) {
        const calibration::Figure* i = chosen[n];
        const auto [published_low, published_high] = published[n];
        std::vector<nlohmann::json> summaries;
        std::string error;
        for (size_t k : item_runs[n]) {
            const ChildRun& c = results[k];
            if (c.summary.is_discarded() || c.status != 0) error = "a run failed (exit " + std::to_string(c.status) + ")";
            summaries.push_back(c.summary);
        }
        double v = 0;
        if (error.empty()) {
            try {
                v = i->value.evaluate({&summaries, config_values.ps, config_values.hz});
            } catch (const std::exception& e) {
                error = e.what();
            }
        }
        const double mid = (published_low + published_high) / 2;
        const bool pass = error.empty() && v >= published_low && v <= published_high;
        const bool gap = !pass && error.empty() && !i->known_gap.empty();
        failed += pass || gap ? 0 : 1;
        gaps += gap ? 1 : 0;
        char published_text[64];
        std::snprintf(published_text, sizeof published_text, "%.4g..%.4g", published_low, published_high);
        rows.push_back({{"id", i->id}, {"what", i->what}, {"simulated", v}, {"unit", i->unit},
                        {"published", {published_low, published_high}}, {"source", i->source},
                        {"ratio", mid != 0 ? v / mid : 0.0}, {"pass", pass}, {"error", error},
                        {"known_gap", gap ? i->known_gap : ""}});
        if (!o.json) {
            const char* verdict = pass ? "ok" : gap ? "out: known gap" : "OUT OF TOLERANCE";
            std::printf("%-22s %12.4g %-10s %-22s %8.3f  %s%s\n", i->id.c_str(), v, i->unit.c_str(), published_text,
                        mid != 0 ? v / mid : 0.0, verdict, error.empty() ? "" : (": " + error).c_str());
        }
    }
    const std::string html = value_of(o, "--html", "");
    if (!html.empty()) {
        write_output(html, html_page("pfsim calibrate", curves(o, jobs, trace_file)));
    }
    if (o.json) {
        std::cout << nlohmann::json{{"schema", "pfsim.calibrate/1"}, {"figures", rows}, {"failed", failed},
                                    {"known_gaps", gaps},
                                    {"config", cfg.to_json()}}
                         .dump(2)
                  << "\n";
    } else {
        std::printf("%zu figures, %d out of tolerance", chosen.size(), failed);
        if (gaps) std::printf(", %d out as known gaps (docs/calibration.md)", gaps);
        std::printf("\n");
    }
    return failed ? 1 : 0;
}

}  // namespace pfsim

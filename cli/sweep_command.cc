// pfsim sweep KERNEL --grid key=v1,v2 ...: the cartesian product of the grids,
// each point run with prefetch off and on in worker processes; CSV and a plot.
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli/children.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cases/case_file.h"
#include "cli/plot.h"

namespace pfsim {

namespace {

struct Grid {
    std::string key;  // a configuration key, or arg.NAME for a kernel argument
    std::vector<std::string> values;
};

// `kernel` is null for a case file, whose arg.NAME grids are its [params].
Grid parse_grid(const std::string& text, const KernelCase* kernel, const std::string& case_path, const CommonOptions& o) {
    const size_t eq = text.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
        throw UsageError("--grid " + text + ": expected key=v1,v2,...");
    }
    Grid g{text.substr(0, eq), {}};
    std::stringstream values(text.substr(eq + 1));
    for (std::string v; std::getline(values, v, ',');) g.values.push_back(v);
    // Every value is checked before anything runs.
    for (const std::string& v : g.values) {
        if (g.key.rfind("arg.", 0) == 0) {
            try {
                if (kernel) {
                    resolve_kernel_args(*kernel, {g.key.substr(4) + "=" + v});
                } else {
                    read_case(case_path, {g.key.substr(4) + "=" + v});
                }
            } catch (const std::invalid_argument& e) {
                throw UsageError(std::string("--grid ") + text + ": " + e.what());
            }
        } else {
            CommonOptions point = o;
            point.sets.push_back(g.key + "=" + v);
            try {
                resolve_config(point);
            } catch (const ConfigError& e) {
                throw UsageError(std::string("--grid ") + text + ": " + e.what());
            }
        }
    }
    return g;
}

std::string csv_cell(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {}, {"--grid", "--jobs", "--csv", "--html"});
    if (o.positional.size() != 1) throw UsageError("sweep takes one kernel name or case file");
    api::RunRequest target;
    target.target = o.positional[0];
    const KernelCase* kernel = nullptr;
    std::string name = target.target;
    if (target.is_case()) {
        target.target = user_path(target.target);
        try {
            name = read_case(target.target).name;
        } catch (const CaseError& e) {
            throw UsageError(e.what());
        }
    } else {
        kernel = &kernel_named(target.target);
    }
    resolve_config(o);
    std::vector<Grid> grids;
    for (const std::string& g : o.values["--grid"]) {
        grids.push_back(parse_grid(g, kernel, target.target, o));
        for (size_t i = 0; i + 1 < grids.size(); ++i) {
            if (grids[i].key == grids.back().key) throw UsageError("--grid " + grids.back().key + " given twice");
        }
    }
    if (grids.empty()) throw UsageError("sweep needs at least one --grid key=v1,v2,...");
    const unsigned jobs = jobs_option(o);
    check_writable(value_of(o, "--csv", ""));
    check_writable(value_of(o, "--html", ""));

    // The cartesian product, first grid slowest.
    std::vector<std::vector<std::string>> points = {{}};
    for (const Grid& g : grids) {
        std::vector<std::vector<std::string>> more;
        for (const auto& p : points) {
            for (const std::string& v : g.values) {
                auto q = p;
                q.push_back(v);
                more.push_back(q);
            }
        }
        points = more;
    }
    std::vector<std::vector<std::string>> runs;
    for (const auto& p : points) {
        for (const char* mode : {"off", "on"}) {
            std::vector<std::string> a = {"run", target.target, "--json", "--prefetch", mode};
            const std::vector<std::string> config = config_args(o);
            a.insert(a.end(), config.begin(), config.end());
            for (size_t i = 0; i < grids.size(); ++i) {
                if (grids[i].key.rfind("arg.", 0) == 0) {
                    a.insert(a.end(), {"--arg", grids[i].key.substr(4) + "=" + p[i]});
                } else {
                    a.insert(a.end(), {"--set", grids[i].key + "=" + p[i]});
                }
            }
            runs.push_back(a);
        }
    }
    const bool tty = isatty(STDERR_FILENO);
    const std::vector<ChildRun> results = run_children(runs, jobs, [&](size_t done, size_t total) {
        const size_t pts = done / 2, all = total / 2;
        if (tty) {
            const int bar = static_cast<int>(30 * done / total);
            std::fprintf(stderr, "\rsweep %s [%s%s] %zu/%zu points", name.c_str(), std::string(bar, '#').c_str(),
                         std::string(30 - bar, '.').c_str(), pts, all);
            if (done == total) std::fprintf(stderr, "\n");
        } else if (done % 2 == 0) {
            std::fprintf(stderr, "sweep %s: %zu/%zu points done\n", name.c_str(), pts, all);
        }
    });

    std::ostringstream csv;
    for (const Grid& g : grids) csv << csv_cell(g.key) << ",";
    csv << "time_off_ns,time_on_ns,gain_pct,l2_hit_rate_off,l2_hit_rate_on,error\n";
    std::vector<double> xs, off_t, on_t, gains;
    int failed = 0;
    for (size_t i = 0; i < points.size(); ++i) {
        for (const std::string& v : points[i]) csv << csv_cell(v) << ",";
        const api::RunResult off = run_result(results[2 * i]);
        const api::RunResult on = run_result(results[2 * i + 1]);
        std::string error;
        for (size_t k = 0; k < 2 && error.empty(); ++k) {
            const ChildRun& child = results[2 * i + k];
            const api::RunResult& r = k == 0 ? off : on;
            if (!r.error.empty()) {  // a child that printed no summary: what it said on stderr
                error = r.error;
            } else if (child.status != 0) {
                error = "exit status " + std::to_string(child.status);
            }
        }
        if (!error.empty()) {
            csv << ",,,,," << csv_cell(error) << "\n";
            ++failed;
            continue;
        }
        const double t_off = off.kernel_time_ns, t_on = on.kernel_time_ns;
        const double gain = t_off > 0 ? (t_off - t_on) / t_off * 100 : 0;
        char row[256];
        std::snprintf(row, sizeof row, "%.3f,%.3f,%.3f,%.4f,%.4f,\n", t_off, t_on, gain,
                      off.l2_hit_rate(), on.l2_hit_rate());
        csv << row;
        xs.push_back(static_cast<double>(i));
        off_t.push_back(t_off / 1e3);
        on_t.push_back(t_on / 1e3);
        gains.push_back(gain);
    }
    const std::string csv_path = value_of(o, "--csv", "");
    if (csv_path.empty()) {
        std::cout << csv.str();
    } else {
        write_output(csv_path, csv.str());
    }
    const std::string html = value_of(o, "--html", "");
    if (!html.empty()) {
        std::string labels = "<p>Points, in order:</p><ol start=\"0\">";
        for (const auto& p : points) {
            std::string l;
            for (size_t i = 0; i < grids.size(); ++i) l += (i ? ", " : "") + grids[i].key + "=" + p[i];
            labels += "<li>" + l + "</li>";
        }
        labels += "</ol>\n";
        const std::string body =
            line_chart("time", "Kernel time (us), prefetch off and on", {{"off", xs, off_t, 0}, {"on", xs, on_t, 1}},
                       "point (see the list below)", "", 1) +
            line_chart("gain", "Gain from prefetch (%; negative: a loss)", {{"gain", xs, gains, 2}},
                       "point (see the list below)", "", 1) +
            labels;
        write_output(html, html_page("pfsim sweep " + name, body));
    }
    return failed ? 1 : 0;
}

}  // namespace pfsim

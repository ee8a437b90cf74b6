// pfsim sweep KERNEL --grid key=v1,v2 ...: the cartesian product of the grids,
// each point run with prefetch off and on in worker processes, here or as a
// Slurm job array (--slurm); CSV and a plot.
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "cli/batch.h"
#include "cli/children.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "session/case_file.h"
#include "session/verdict.h"
#include "cli/plot.h"
#include "cli/slurm.h"

namespace pfsim {

namespace {

struct Grid {
    std::string key;  // a configuration key, or arg.NAME for one of the case's [params]
    std::vector<std::string> values;
};

Grid parse_grid(const std::string& text, const std::string& case_path, const CommonOptions& o) {
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
                read_case(case_path, {g.key.substr(4) + "=" + v});
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

// A sweep: its grids, each point's values, and the batch of child runs.
struct Sweep {
    std::string name, target;  // target: the case file
    std::vector<Grid> grids;
    std::vector<std::vector<std::string>> values;  // per point, one per grid
    BatchPlan plan;
};

// The sweep `arguments` define: a shipped case's name or a case file (an absolute path),
// --grid options and the configuration options. What makes a sweep, nothing
// about where it runs: a batch folder keeps these to collect it later.
Sweep plan_sweep(const std::vector<std::string>& arguments) {
    const CommonOptions o = parse_options(arguments, {}, {"--grid"});
    if (o.positional.size() != 1) throw UsageError("sweep takes one case name or case file");
    const std::string target = api::resolve_target(o.positional[0]);
    Sweep sweep;
    sweep.target = target;
    try {
        sweep.name = read_case(target).name;
    } catch (const CaseError& e) {
        throw UsageError(e.what());
    }
    resolve_config(o);
    for (const std::string& g : o.values.count("--grid") ? o.values.at("--grid") : std::vector<std::string>{}) {
        sweep.grids.push_back(parse_grid(g, target, o));
        for (size_t i = 0; i + 1 < sweep.grids.size(); ++i) {
            if (sweep.grids[i].key == sweep.grids.back().key) {
                throw UsageError("--grid " + sweep.grids.back().key + " given twice");
            }
        }
    }
    if (sweep.grids.empty()) throw UsageError("sweep needs at least one --grid key=v1,v2,...");

    // The cartesian product, first grid slowest.
    sweep.values = {{}};
    for (const Grid& g : sweep.grids) {
        std::vector<std::vector<std::string>> more;
        for (const auto& p : sweep.values) {
            for (const std::string& v : g.values) {
                auto q = p;
                q.push_back(v);
                more.push_back(q);
            }
        }
        sweep.values = more;
    }
    sweep.plan.command = "sweep";
    sweep.plan.arguments = arguments;
    for (const auto& p : sweep.values) {
        BatchPoint point;
        for (size_t i = 0; i < sweep.grids.size(); ++i) {
            point.label += (i ? ", " : "") + sweep.grids[i].key + "=" + p[i];
        }
        for (const bool prefetch : {false, true}) {
            api::RunSpec run;
            run.config = config_choice(o);
            run.run.target = target;
            run.run.prefetch = prefetch;
            for (size_t i = 0; i < sweep.grids.size(); ++i) {
                if (sweep.grids[i].key.rfind("arg.", 0) == 0) {
                    run.run.kernel_args.push_back(sweep.grids[i].key.substr(4) + "=" + p[i]);
                } else {
                    run.config.sets.push_back(sweep.grids[i].key + "=" + p[i]);
                }
            }
            point.runs.push_back(run);
        }
        sweep.plan.points.push_back(point);
    }
    return sweep;
}

// The arguments that define the sweep the user asked for, with every path
// absolute, so that a batch task or a collect elsewhere reads the same files.
std::vector<std::string> defining_arguments(const CommonOptions& o) {
    if (o.positional.size() != 1) throw UsageError("sweep takes one case name or case file");
    api::RunRequest target;
    target.target = o.positional[0];  // a shipped case's name stays a name
    std::vector<std::string> out = {target.is_case() ? std::filesystem::absolute(user_path(target.target)).string()
                                                     : target.target};
    if (o.values.count("--grid")) {
        for (const std::string& g : o.values.at("--grid")) out.insert(out.end(), {"--grid", g});
    }
    CommonOptions config = o;
    for (std::string& f : config.config_files) f = std::filesystem::absolute(f).string();
    const std::vector<std::string> c = config_args(config);
    out.insert(out.end(), c.begin(), c.end());
    return out;
}

// The CSV (stdout or --csv) and the --html plot of a sweep's results; a point
// without results is a row whose error says it did not run. Returns the exit
// status: 1 when any point failed or did not run.
int report_sweep(const Sweep& sweep, const std::vector<std::optional<PointResults>>& results,
                 const std::string& csv_path, const std::string& html) {
    std::ostringstream csv;
    for (const Grid& g : sweep.grids) csv << csv_cell(g.key) << ",";
    csv << "time_off_ns,time_on_ns,gain_pct,l2_hit_rate_off,l2_hit_rate_on,error\n";
    std::vector<double> xs, off_t, on_t, gains;
    int failed = 0;
    std::string not_run;
    size_t printed = 0;  // points whose users' code printed to stdout
    for (size_t i = 0; i < sweep.values.size(); ++i) {
        for (const std::string& v : sweep.values[i]) csv << csv_cell(v) << ",";
        if (!results[i]) {
            csv << ",,,,,not run\n";
            not_run += (not_run.empty() ? "" : "; ") + sweep.plan.points[i].label;
            ++failed;
            continue;
        }
        const PointResults& pair = *results[i];
        const api::RunResult off = run_result(pair[0]);
        const api::RunResult on = run_result(pair[1]);
        // What users' code printed to stdout, kept off the CSV: the first point's on stderr, the others counted.
        if (!on.user_stdout.empty() && printed++ == 0) {
            std::cerr << "pfsim: sweep " << sweep.name << ": " << sweep.plan.points[i].label
                      << " (prefetch on): users' code printed to stdout (shown here, not on pfsim's stdout):\n"
                      << on.user_stdout << (on.user_stdout.back() == '\n' ? "" : "\n");
        }
        const api::Verdict verdict = api::judge(off, on);
        if (!verdict.equivalent()) {
            csv << ",,,,," << csv_cell(verdict.failure) << "\n";
            ++failed;
            continue;
        }
        const double t_off = verdict.time_off_ns, t_on = verdict.time_on_ns, gain = verdict.gain_pct;
        char row[256];
        std::snprintf(row, sizeof row, "%.3f,%.3f,%.3f,%.4f,%.4f,\n", t_off, t_on, gain,
                      off.l2_hit_rate(), on.l2_hit_rate());
        csv << row;
        xs.push_back(static_cast<double>(i));
        off_t.push_back(t_off / 1e3);
        on_t.push_back(t_on / 1e3);
        gains.push_back(gain);
    }
    if (printed > 1) std::cerr << "pfsim: sweep " << sweep.name << ": " << printed - 1 << " more points printed to stdout\n";
    if (!not_run.empty()) {
        std::fprintf(stderr, "pfsim: sweep %s: points not run: %s\n", sweep.name.c_str(), not_run.c_str());
    }
    if (csv_path.empty()) {
        std::cout << csv.str();
    } else {
        write_output(csv_path, csv.str());
    }
    if (!html.empty()) {
        std::string labels = "<p>Points, in order:</p><ol start=\"0\">";
        for (const BatchPoint& p : sweep.plan.points) labels += "<li>" + p.label + "</li>";
        labels += "</ol>\n";
        const std::string body =
            line_chart("time", "Kernel time (us), prefetch off and on", {{"off", xs, off_t, 0}, {"on", xs, on_t, 1}},
                       "point (see the list below)", "", 1) +
            line_chart("gain", "Gain from prefetch (%; negative: a loss)", {{"gain", xs, gains, 2}},
                       "point (see the list below)", "", 1) +
            labels;
        write_output(html, html_page("pfsim sweep " + sweep.name, body));
    }
    return failed ? 1 : 0;
}

std::vector<std::optional<PointResults>> stored_results(const BatchStore& store) {
    std::vector<std::optional<PointResults>> out;
    for (size_t i = 0; i < store.plan().points.size(); ++i) out.push_back(store.read(i));
    return out;
}

}  // namespace

int cmd_sweep(const std::vector<std::string>& args) {
    std::vector<std::string> valued = {"--grid", "--jobs", "--csv", "--html", "--out", "--collect", "--progress", "--timeout"};
    valued.insert(valued.end(), kSlurmValues.begin(), kSlurmValues.end());
    const CommonOptions o = parse_options(args, {"--slurm", "--wait"}, valued);
    set_still_running_every(progress_option_ms(o));
    const std::string csv = value_of(o, "--csv", ""), html = value_of(o, "--html", "");
    const std::string out = value_of(o, "--out", "");
    slurm_options(o);  // --partition and the like without --slurm: exit 2
    const bool on_slurm = has_flag(o, "--slurm");

    if (o.values.count("--collect")) {
        const std::string dir = value_of(o, "--collect", "");
        if (!o.positional.empty() || o.values.count("--grid") || on_slurm || !out.empty()) {
            throw UsageError("sweep --collect DIR takes the sweep from DIR: no kernel, --grid, --out or --slurm");
        }
        check_writable(csv);
        check_writable(html);
        const BatchStore store = BatchStore::open(dir, "sweep");
        const Sweep sweep = plan_sweep(store.plan().arguments);
        store.check_current(sweep.plan);
        return report_sweep(sweep, stored_results(store), csv, html);
    }

    const Sweep sweep = plan_sweep(defining_arguments(o));
    check_writable(csv);
    check_writable(html);
    const auto inputs = read_case(sweep.target).inputs();
    refuse_overwriting_an_input(o, "--csv", csv, inputs);
    refuse_overwriting_an_input(o, "--html", html, inputs);
    const std::string what = "sweep " + sweep.name;
    if (on_slurm) {
        const std::optional<BatchStore> store = run_on_slurm(sweep.plan, o, what);
        return store ? report_sweep(sweep, stored_results(*store), csv, html) : 0;
    }

    const unsigned jobs = jobs_option(o);
    std::optional<BatchStore> store;
    std::vector<size_t> pending;
    if (!out.empty()) {
        store = BatchStore::create(out, sweep.plan);
        pending = store->pending();
    } else {
        for (size_t i = 0; i < sweep.plan.points.size(); ++i) pending.push_back(i);
    }
    std::vector<std::optional<PointResults>> results =
        store ? stored_results(*store) : std::vector<std::optional<PointResults>>(sweep.plan.points.size());
    const std::vector<PointResults> ran =
        run_points(sweep.plan, pending, jobs, store ? &*store : nullptr, points_progress(what));
    for (size_t k = 0; k < pending.size(); ++k) results[pending[k]] = ran[k];
    return report_sweep(sweep, results, csv, html);
}

}  // namespace pfsim

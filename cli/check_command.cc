// pfsim check: every kernel with prefetch off and on, each run in a fresh
// process (a fresh simulated die), compared.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cli/batch.h"
#include "cli/children.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/slurm.h"
#include "cli/text.h"
#include "session/case_file.h"
#include "session/verdict.h"

namespace pfsim {

namespace {

// "min..max" of a kernel's expected gain in %, an unbounded side empty.
std::string expected_gain_text(double min_pct, double max_pct) {
    // +-1e9 is how a kernel says "no bound" (a microbenchmark's loss, a calibration kernel).
    auto bound = [](double v) {
        if (std::fabs(v) >= 1e8) return std::string();
        std::ostringstream os;
        os << v;
        return os.str();
    };
    return bound(min_pct) + ".." + bound(max_pct);
}

// What to check: a case file, and the gain range `--strict-gain` holds it to.
struct CheckItem {
    std::string name, target;
    double expected_min_pct, expected_max_pct;
};

// A check: its items, one batch point per item (the runs off, on and, with
// --advise, the ideal run), made from the options that define the check.
struct CheckPlan {
    CommonOptions options;  // the defining options
    SanitizeOptions sanitize;
    std::vector<CheckItem> items;
    BatchPlan batch;
    std::vector<std::pair<std::string, std::string>> inputs;  // what every item reads (CaseSpec::inputs)
};

const std::vector<std::string> kCheckDefiningFlags = {"--advise", "--sanitize"};
const std::vector<std::string> kCheckDefiningValues = {"--arg", "--inject", "--trace", "--error-exitcode",
                                                       "--print-limit", "--suppressions"};

// The run of `target` that every run of a check starts from: its --arg values
// and the configuration options, prefetch `prefetch`.
api::RunSpec item_run(const CommonOptions& o, const std::string& target, bool prefetch) {
    api::RunSpec run;
    run.config = config_choice(o);
    run.run.target = target;
    if (o.values.count("--arg")) run.run.kernel_args = o.values.at("--arg");
    run.run.prefetch = prefetch;
    run.run.task_records = false;  // a check reads no task's record (a level-3 case's runs keep theirs)
    return run;
}

// The --inject faults of a check, which go into its prefetch-on runs.
std::vector<std::string> injected(const CommonOptions& o) {
    return o.values.count("--inject") ? o.values.at("--inject") : std::vector<std::string>{};
}

CheckPlan plan_check(const std::vector<std::string>& arguments) {
    CheckPlan p;
    p.options = parse_options(arguments, kCheckDefiningFlags, kCheckDefiningValues);
    const CommonOptions& o = p.options;
    resolve_config(o);  // bad configuration: exit 2 before running anything
    p.sanitize = sanitize_options(o);
    // --arg NAME=VALUE sets a [params] value of every case checked: each must have NAME.
    const std::vector<std::string> params = o.values.count("--arg") ? o.values.at("--arg") : std::vector<std::string>{};
    auto add_case = [&](const std::string& path) {
        try {
            const CaseSpec c = read_case(path, params);
            for (const CheckItem& k : p.items) {
                if (k.name == c.name && o.values.count("--trace")) {
                    throw UsageError("--trace: " + k.target + " and " + path + " are both named '" + c.name +
                                     "': their traces would be the same files (give one another name = ...)");
                }
            }
            p.items.push_back({c.name, path, c.expected_min_pct, c.expected_max_pct});
            const auto in = c.inputs();
            p.inputs.insert(p.inputs.end(), in.begin(), in.end());
        } catch (const CaseError& e) {
            throw UsageError(e.what());
        }
    };
    if (o.positional.empty()) {
        for (const std::string& path : shipped_cases()) {
            if (read_case(path).in_check) add_case(path);
        }
    } else {
        for (const std::string& name : o.positional) add_case(is_case_file(name) ? user_path(name) : api::resolve_target(name));
    }
    p.batch.command = "check";
    p.batch.arguments = arguments;
    for (const CheckItem& k : p.items) {
        api::RunSpec off = item_run(o, k.target, false), on = item_run(o, k.target, true);
        const std::string prefix = value_of(o, "--trace", "");
        if (!prefix.empty()) {  // PREFIX.KERNEL.off.json and PREFIX.KERNEL.on.json
            for (const char* run : {".off.json", ".on.json"}) {
                refuse_overwriting_an_input(o, "--trace", prefix + "." + k.name + run, p.inputs);
            }
            off.run.trace = user_path(prefix) + "." + k.name + ".off.json";
            on.run.trace = user_path(prefix) + "." + k.name + ".on.json";
        }
        on.run.faults = injected(o);
        apply_sanitize(p.sanitize, on.run);  // the prefetch-on run only
        on.run.advise = has_flag(o, "--advise");  // check measures the what-ifs itself
        BatchPoint point{k.name, {off, on}};
        if (has_flag(o, "--advise")) {  // the advisor's upper bound: prefetch off, every core access an L2 hit
            point.runs.push_back(off);
            point.runs.back().config.sets.push_back("l2.demand=ideal");
        }
        p.batch.points.push_back(point);
    }
    return p;
}

// The arguments that define the check the user asked for, every path absolute.
std::vector<std::string> defining_arguments(const CommonOptions& o) {
    namespace fs = std::filesystem;
    std::vector<std::string> out;
    for (const std::string& name : o.positional) {
        out.push_back(is_case_file(name) ? fs::absolute(user_path(name)).string() : name);
    }
    for (const std::string& f : kCheckDefiningFlags) {
        if (has_flag(o, f)) out.push_back(f);
    }
    for (const std::string& v : kCheckDefiningValues) {
        if (!o.values.count(v)) continue;
        for (const std::string& value : o.values.at(v)) {
            const bool path = v == "--trace" || v == "--suppressions";
            out.insert(out.end(), {v, path ? fs::absolute(user_path(value)).string() : value});
        }
    }
    CommonOptions config = o;
    for (std::string& f : config.config_files) f = fs::absolute(f).string();
    const std::vector<std::string> c = config_args(config);
    out.insert(out.end(), c.begin(), c.end());
    return out;
}

// The --advise follow-ups of one item, run here: each advised site removed,
// resident at no cost, or warmed (site_what_ifs).
void measure_site_what_ifs(const CheckPlan& p, const CheckItem& k, api::RunResult& on) {
    const std::vector<SiteWhatIf> what_ifs = site_what_ifs(on.advisor);
    std::vector<api::RunSpec> runs;
    for (const SiteWhatIf& w : what_ifs) {
        runs.push_back(item_run(p.options, k.target, true));
        w.apply_to(runs.back().run);
        runs.back().run.faults = injected(p.options);
    }
    std::vector<api::RunResult> measured;
    for (const ChildRun& c : run_children(runs, 2)) measured.push_back(run_result(c));
    record_site_what_ifs(on.advisor, what_ifs, measured);
}

// A level-3 case's tasks, off against on (the two runs record the same graph):
// each task's time, first dispatch to last completion.
nlohmann::json rank_tasks_json(const api::RunResult& off, const api::RunResult& on) {
    nlohmann::json tasks = nlohmann::json::array();
    for (size_t t = 0; t < on.tasks.size() && t < off.tasks.size(); ++t) {
        const api::TaskResult& a = off.tasks[t];
        const api::TaskResult& b = on.tasks[t];
        tasks.push_back({{"name", b.name}, {"kernels", b.kernels}, {"time_off_ns", a.end_ns - a.start_ns},
                         {"time_on_ns", b.end_ns - b.start_ns}});
    }
    return tasks;
}

// Under a level-3 case's row: the tasks whose names start with `rank`, off and on.
void print_rank_tasks(const api::RunResult& off, const api::RunResult& on, const std::string& rank) {
    for (const nlohmann::json& t : rank_tasks_json(off, on)) {
        const std::string name = t["name"].get<std::string>();
        if (name.rfind(rank, 0) != 0) continue;
        std::string kernels;
        for (const auto& k : t["kernels"]) kernels += (kernels.empty() ? "" : ",") + k.get<std::string>();
        const double a = t["time_off_ns"].get<double>(), b = t["time_on_ns"].get<double>();
        std::printf("%-16s %12.3f %12.3f %8.2f  %s\n", "", a / 1e3, b / 1e3, a > 0 ? 100 * (a - b) / a : 0.0,
                    (name + " " + kernels).c_str());
    }
}

// Evaluates each item as its results come (`results_of` runs or reads them),
// prints the table (or --json), writes --junit; returns the exit status.
int report_check(const CheckPlan& p, const CommonOptions& out_options,
                 const std::function<std::optional<PointResults>(size_t)>& results_of) {
    const bool json = out_options.json, strict_gain = has_flag(out_options, "--strict-gain");
    const SanitizeOptions& sanitize = p.sanitize;
    nlohmann::json rows = nlohmann::json::array();
    int failed = 0, sanitizer_failed = 0;  // failed counts the second too
    std::string advisor_text;             // --advise: each kernel's table, after the summary
    if (!json) {
        std::printf("%-16s %12s %12s %8s %16s %8s %8s  %s\n", "kernel", "time off us", "time on us", "gain %",
                    "expected gain %", "L2 off", "L2 on", "verdict");
    }
    for (size_t i = 0; i < p.items.size(); ++i) {
        const CheckItem* k = &p.items[i];
        const std::optional<PointResults> pair = results_of(i);
        api::Verdict verdict;
        verdict.failure = "not run (no result in the batch folder)";
        api::RunResult off, on;
        if (pair) {
            off = run_result((*pair)[0]);
            on = run_result((*pair)[1]);
            for (const ChildRun& c : *pair) {  // bad input to a run is bad input to check: its message, exit 2
                if (c.status == 2) throw api::BadInput(k->name + ": " + run_result(c).error);
            }
            if (on.advised && pair->size() == 3) {
                on.advisor.what_if = measured_what_if(off, on, run_result((*pair)[2]));
                measure_site_what_ifs(p, *k, on);
            }
            verdict = api::judge(off, on, {k->expected_min_pct, k->expected_max_pct});
        }
        const std::string& failure = verdict.failure;
        nlohmann::json row = {{"name", k->name}, {"equal", failure.empty()},
                              {"expected_gain_pct", {k->expected_min_pct, k->expected_max_pct}}};
        if (!on.params.empty()) row["params"] = on.params;  // a case's [params], after --arg
        const double gain = verdict.gain_pct;
        const bool gain_met = verdict.gain_met;
        if (failure.empty()) {
            row["time_off_ns"] = verdict.time_off_ns;
            row["time_on_ns"] = verdict.time_on_ns;
            row["gain_pct"] = gain;
            row["l2_hit_rate_off"] = off.l2_hit_rate();
            row["l2_hit_rate_on"] = on.l2_hit_rate();
            row["warnings"] = on.warnings;
        }
        row["gain_met"] = gain_met;
        const uint64_t sanitizer_errors = on.sanitized ? on.sanitizer.count(insight::Severity::Error) : 0;
        const bool sanitizer_fails = sanitizer_errors > 0 && sanitize.error_exitcode != 0;
        const bool pass = failure.empty() && (gain_met || !strict_gain) && !sanitizer_fails;
        row["verdict"] = pass ? "pass" : "fail";
        if (!failure.empty()) {
            row["reason"] = failure;
        } else if (sanitizer_fails) {
            row["reason"] = "the sanitizer reported " + std::to_string(sanitizer_errors) + (sanitizer_errors == 1 ? " error" : " errors");
        } else if (!gain_met) {
            row["reason"] = "gain " + std::to_string(gain) + " % outside the expected range";
        }
        // What users' code printed to stdout: on stderr, never on check's stdout; the row keeps prefetch on's.
        for (const api::RunResult* r : {&off, &on}) {
            if (r->user_stdout.empty()) continue;
            std::cerr << "pfsim: " << k->name << " (prefetch " << (r == &off ? "off" : "on")
                      << "): users' code printed to stdout (shown here, not on pfsim's stdout):\n"
                      << r->user_stdout << (r->user_stdout.back() == '\n' ? "" : "\n");
        }
        if (!on.user_stdout.empty()) row["user_stdout"] = on.user_stdout;
        if (on.sanitized) {
            row["sanitizer"] = on.sanitizer.to_json();
            std::cerr << "========= " << k->name << " (prefetch on)\n" << on.sanitizer.text(sanitize.print_limit);
        }
        if (on.advised) {
            row["advisor"] = on.advisor.to_json();
            advisor_text += "== " + k->name + " (prefetch on)\n" + on.advisor.text() + "\n";
        }
        failed += pass ? 0 : 1;
        sanitizer_failed += sanitizer_fails && failure.empty() ? 1 : 0;
        if (!json) {
            const std::string exp = expected_gain_text(k->expected_min_pct, k->expected_max_pct);
            if (failure.empty() && sanitizer_fails) {
                std::printf("%-16s %12.3f %12.3f %8.2f %16s %7.1f%% %7.1f%%  FAIL: %s\n", k->name.c_str(),
                            row["time_off_ns"].get<double>() / 1e3, row["time_on_ns"].get<double>() / 1e3, gain,
                            exp.c_str(), 100 * row["l2_hit_rate_off"].get<double>(),
                            100 * row["l2_hit_rate_on"].get<double>(), row["reason"].get<std::string>().c_str());
            } else if (failure.empty()) {
                std::printf("%-16s %12.3f %12.3f %8.2f %16s %7.1f%% %7.1f%%  %s%s\n", k->name.c_str(),
                            row["time_off_ns"].get<double>() / 1e3, row["time_on_ns"].get<double>() / 1e3, gain,
                            exp.c_str(), 100 * row["l2_hit_rate_off"].get<double>(),
                            100 * row["l2_hit_rate_on"].get<double>(), pass ? "PASS" : "FAIL",
                            gain_met ? "" : " (gain not as expected)");
            } else {
                std::printf("%-16s %12s %12s %8s %16s %8s %8s  FAIL: %s\n", k->name.c_str(), "-", "-", "-",
                            exp.c_str(), "-", "-", failure.c_str());
            }
            if (failure.empty() && on.ranks > 1) print_rank_tasks(off, on, "rank 0: ");
            std::fflush(stdout);
        }
        if (failure.empty() && on.ranks > 1) row["tasks"] = rank_tasks_json(off, on);
        rows.push_back(row);
    }
    const int passed = static_cast<int>(p.items.size()) - failed;
    if (json) {
        std::cout << nlohmann::json{{"schema", "pfsim.check/1"}, {"kernels", rows}, {"passed", passed},
                                    {"failed", failed}, {"config", resolve_config(p.options).to_json()}}
                         .dump(2)
                  << "\n";
    } else {
        std::printf("%d passed, %d failed\n", passed, failed);
        if (!advisor_text.empty()) std::printf("\n%s", advisor_text.c_str());
    }
    const std::string junit = value_of(out_options, "--junit", "");
    if (!junit.empty()) {
        std::ostringstream x;
        x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuite name=\"pfsim check\" tests=\"" << p.items.size()
          << "\" failures=\"" << failed << "\">\n";
        for (const auto& row : rows) {
            x << "  <testcase classname=\"pfsim.check\" name=\"" << markup_escape(row["name"]) << "\"";
            if (row["verdict"] == "pass") {
                x << "/>\n";
            } else {
                x << ">\n    <failure message=\"" << markup_escape(row.value("reason", std::string("failed")))
                  << "\"/>\n  </testcase>\n";
            }
        }
        x << "</testsuite>\n";
        write_output(junit, x.str());
    }
    if (failed > sanitizer_failed) return 1;
    return sanitizer_failed ? sanitize.error_exitcode : 0;
}

// pfsim check --uncertainty: the check as asked, then again at each end of
// every parameter's plausible range (the preset's [ranges]; --vary KEY,...
// picks some), one parameter at a time; then, per case, the combination that
// pushes its gain lowest and the one that pushes it highest, searched from
// those runs: each parameter at the end that moved this case's gain that way
// (left at its value when neither end did). Per case: the gain as a range (over
// every run made), the parameter whose ends move it most, and whether its sign
// holds.
int check_uncertainty(const CommonOptions& o) {
    const Config cfg = resolve_config(o);
    std::vector<std::string> keys;
    std::stringstream vary(value_of(o, "--vary", ""));
    for (std::string key; std::getline(vary, key, ',');) {
        if (!cfg.ranges().count(key)) throw UsageError("--vary: '" + key + "' has no range in the configuration");
        keys.push_back(key);
    }
    if (keys.empty()) {
        for (const auto& [key, range] : cfg.ranges()) {
            if (range.low != range.high) keys.push_back(key);  // a range of one value moves nothing
        }
    }
    // The check's pairs at the configuration as given (variant 0), then at each
    // end of each key's range (variants 1 + 2i and 2 + 2i).
    const CheckPlan plan = plan_check(defining_arguments(o));
    std::vector<std::string> variants = {""};
    for (const std::string& key : keys) {
        for (const std::string& end : {cfg.ranges().at(key).low, cfg.ranges().at(key).high}) variants.push_back(key + "=" + end);
    }
    std::vector<api::RunSpec> runs;
    for (const std::string& set : variants) {
        for (const BatchPoint& point : plan.batch.points) {
            for (size_t mode = 0; mode < 2; ++mode) {  // off, on
                runs.push_back(point.runs[mode]);
                if (!set.empty()) runs.back().config.sets.push_back(set);
            }
        }
    }
    const std::vector<ChildRun> children = run_children(runs, 2);
    // The gain of each case at one variant, by name; none for a pair that is not equivalent.
    auto gains = [&](size_t variant) {
        std::map<std::string, double> g;
        for (size_t i = 0; i < plan.items.size(); ++i) {
            const size_t first = 2 * (variant * plan.items.size() + i);
            const api::Verdict v = api::judge(run_result(children[first]), run_result(children[first + 1]));
            if (v.equivalent()) g[plan.items[i].name] = v.gain_pct;
        }
        return g;
    };
    std::vector<std::map<std::string, double>> gain_at;
    for (size_t v = 0; v < variants.size(); ++v) gain_at.push_back(gains(v));
    const std::map<std::string, double>& at_preset = gain_at[0];
    if (at_preset.empty()) throw std::runtime_error("the check at the configuration's values gave no gain: " + children[0].error_output);
    // The combinations: per case, per direction (0 lowest, 1 highest), each key
    // at the end that moved the case's gain that way from the preset's.
    std::vector<std::vector<std::string>> combined_sets;  // 2 per item, in plan order
    std::vector<size_t> combined_first;                   // each one's first run (off; on is next), when it runs
    std::vector<size_t> combined_variant;                 // of one key: its variant, already run (else 0)
    std::vector<api::RunSpec> combined_runs;
    for (size_t i = 0; i < plan.items.size(); ++i) {
        const std::string& name = plan.items[i].name;
        for (int direction = 0; direction < 2; ++direction) {
            std::vector<std::string> sets;
            size_t variant = 0;
            if (at_preset.count(name)) {
                const double gain = at_preset.at(name);
                for (size_t k = 0; k < keys.size(); ++k) {
                    const auto &lo = gain_at[1 + 2 * k], &hi = gain_at[2 + 2 * k];
                    if (!lo.count(name) || !hi.count(name)) continue;
                    const double a = lo.at(name), b = hi.at(name);
                    const bool low_end = direction == 0 ? a <= b : a >= b;
                    const double best = low_end ? a : b;
                    if (direction == 0 ? best < gain : best > gain) {
                        variant = 1 + 2 * k + (low_end ? 0 : 1);
                        sets.push_back(variants[variant]);
                    }
                }
            }
            combined_sets.push_back(sets);
            combined_first.push_back(combined_runs.size());
            combined_variant.push_back(sets.size() == 1 ? variant : 0);
            // None moved the gain this way: the preset's pair is the combination; one: its own end, run already.
            if (sets.size() < 2) continue;
            for (size_t mode = 0; mode < 2; ++mode) {
                combined_runs.push_back(plan.batch.points[i].runs[mode]);
                for (const std::string& set : sets) combined_runs.back().config.sets.push_back(set);
            }
        }
    }
    const std::vector<ChildRun> combined_children = run_children(combined_runs, 2);
    // The gain at item i's combination in `direction`, when it moved a key and was measured.
    auto combined_gain = [&](size_t i, int direction) -> std::optional<double> {
        const size_t c = 2 * i + direction;
        if (combined_sets[c].empty()) return std::nullopt;
        if (combined_variant[c] != 0) return gain_at[combined_variant[c]].at(plan.items[i].name);
        const size_t first = combined_first[c];
        const api::Verdict v = api::judge(run_result(combined_children[first]), run_result(combined_children[first + 1]));
        if (!v.equivalent()) return std::nullopt;
        return v.gain_pct;
    };
    nlohmann::json cases = nlohmann::json::array();
    if (!o.json) {
        std::printf("%-22s %9s %17s  %-48s %s\n", "kernel", "gain %", "range %", "moved most by (gain % at its ends)", "sign");
    }
    for (const auto& [name, gain] : at_preset) {
        double low = gain, high = gain, widest = 0;  // a key that moves nothing is not the most sensitive
        std::string most;
        nlohmann::json per_key = nlohmann::json::object();
        std::vector<std::string> missing;
        for (size_t i = 0; i < keys.size(); ++i) {
            const auto &lo = gain_at[1 + 2 * i], &hi = gain_at[2 + 2 * i];
            if (!lo.count(name) || !hi.count(name)) {
                missing.push_back(keys[i]);
                continue;
            }
            const double a = lo.at(name), b = hi.at(name);
            per_key[keys[i]] = {a, b};
            low = std::min({low, a, b});
            high = std::max({high, a, b});
            const double moved = std::max(std::fabs(a - gain), std::fabs(b - gain));
            if (moved > widest) widest = moved, most = keys[i];
        }
        const size_t item = static_cast<size_t>(
            std::find_if(plan.items.begin(), plan.items.end(), [&](const CheckItem& it) { return it.name == name; }) -
            plan.items.begin());
        nlohmann::json combined = nlohmann::json::object();
        for (int direction = 0; direction < 2; ++direction) {
            const std::optional<double> g = combined_gain(item, direction);
            const std::vector<std::string>& sets = combined_sets[2 * item + direction];
            nlohmann::json entry = {{"sets", sets}, {"gain_pct", g ? nlohmann::json(*g) : nlohmann::json()}};
            if (!sets.empty() && !g) missing.push_back(direction == 0 ? "the lowest combination" : "the highest combination");
            if (g) low = std::min(low, *g), high = std::max(high, *g);
            combined[direction == 0 ? "lowest" : "highest"] = entry;
        }
        const bool sign_holds = (low > 0 && high > 0) || (low < 0 && high < 0) || (low == 0 && high == 0);
        cases.push_back({{"name", name}, {"gain_pct", gain}, {"low_pct", low}, {"high_pct", high},
                         {"most_sensitive", most}, {"sign_holds", sign_holds}, {"per_key", per_key},
                         {"combined", combined}, {"not_measured", missing}});
        if (!o.json) {
            char range[64], moved[160];
            std::snprintf(range, sizeof range, "%.2f..%.2f", low, high);
            if (most.empty()) {
                std::snprintf(moved, sizeof moved, "-");
            } else {
                std::snprintf(moved, sizeof moved, "%s (%.2f, %.2f)", most.c_str(), per_key[most][0].get<double>(),
                              per_key[most][1].get<double>());
            }
            const std::string unmeasured =
                missing.empty() ? "" : "; not measured at " + std::to_string(missing.size()) + " of its variants (a run failed)";
            std::printf("%-22s %9.2f %17s  %-48s %s%s\n", name.c_str(), gain, range, moved, sign_holds ? "holds" : "CHANGES",
                        unmeasured.c_str());
        }
    }
    if (o.json) {
        std::cout << nlohmann::json{{"schema", "pfsim.uncertainty/1"}, {"varied", keys}, {"cases", cases}}.dump(2) << "\n";
    } else {
        std::printf("%zu cases, %zu parameters varied one at a time, then combined (%zu runs)\n", at_preset.size(),
                    keys.size(), runs.size() + combined_runs.size());
    }
    return 0;
}

}  // namespace

int cmd_check(const std::vector<std::string>& args) {
    std::vector<std::string> flags = {"--strict-gain", "--slurm", "--wait", "--uncertainty"};
    std::vector<std::string> valued = {"--junit", "--out", "--collect", "--progress", "--timeout", "--vary"};
    flags.insert(flags.end(), kCheckDefiningFlags.begin(), kCheckDefiningFlags.end());
    valued.insert(valued.end(), kCheckDefiningValues.begin(), kCheckDefiningValues.end());
    valued.insert(valued.end(), kSlurmValues.begin(), kSlurmValues.end());
    const CommonOptions o = parse_options(args, flags, valued);
    slurm_options(o);  // --partition and the like without --slurm: exit 2
    set_still_running_every(progress_option_ms(o));
    const bool on_slurm = has_flag(o, "--slurm");
    const std::string out = value_of(o, "--out", "");
    if (has_flag(o, "--uncertainty")) {
        if (on_slurm || !out.empty() || o.values.count("--collect") || o.values.count("--junit") || has_flag(o, "--advise") ||
            has_flag(o, "--sanitize")) {
            throw UsageError("check --uncertainty runs here, with --json, --vary, --arg and the configuration options only");
        }
        return check_uncertainty(o);
    }
    if (o.values.count("--vary")) throw UsageError("--vary is for --uncertainty");

    if (o.values.count("--collect")) {
        const std::string dir = value_of(o, "--collect", "");
        if (!o.positional.empty() || on_slurm || !out.empty() || defining_arguments(o) != defining_arguments(CommonOptions{})) {
            throw UsageError("check --collect DIR takes the check from DIR: only --json, --junit and --strict-gain");
        }
        check_writable(value_of(o, "--junit", ""));
        const BatchStore store = BatchStore::open(dir, "check");
        const CheckPlan p = plan_check(store.plan().arguments);
        store.check_current(p.batch);
        return report_check(p, o, [&](size_t i) { return store.read(i); });
    }

    const CheckPlan p = plan_check(defining_arguments(o));
    check_writable(value_of(o, "--junit", ""));
    refuse_overwriting_an_input(o, "--junit", value_of(o, "--junit", ""), p.inputs);
    if (on_slurm) {
        if (has_flag(o, "--advise")) {
            throw UsageError("--advise measures re-runs chosen from each result: run check --advise here, not on --slurm");
        }
        const std::optional<BatchStore> store = run_on_slurm(p.batch, o, "check");
        return store ? report_check(p, o, [&](size_t i) { return store->read(i); }) : 0;
    }

    // Here: each item run as its row comes, kept in --out DIR when given.
    std::optional<BatchStore> store;
    if (!out.empty()) store = BatchStore::create(out, p.batch);
    return report_check(p, o, [&](size_t i) -> std::optional<PointResults> {
        if (store) {
            if (std::optional<PointResults> kept = store->read(i)) return kept;
        }
        return run_points(p.batch, {i}, 2, store ? &*store : nullptr)[0];
    });
}

int cmd_kernels(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {});
    nlohmann::json list = nlohmann::json::array();
    for (const std::string& path : shipped_cases()) {
        const CaseSpec c = read_case(path);
        const std::string source = shipped_case_label(path);
        nlohmann::json params = nlohmann::json::array();
        for (const auto& [name, value] : c.params) params.push_back({{"name", name}, {"default", value}});
        list.push_back({{"name", c.name}, {"description", c.description}, {"case", source}, {"params", params},
                        {"in_check", c.in_check}, {"expected_gain_pct", {c.expected_min_pct, c.expected_max_pct}}});
        if (o.json) continue;
        std::printf("%-20s %s\n%20s   case file %s\n", c.name.c_str(), c.description.c_str(), "", source.c_str());
        if (c.in_check) {
            std::printf("%20s   expected gain %s %%\n", "", expected_gain_text(c.expected_min_pct, c.expected_max_pct).c_str());
        } else {
            std::printf("%20s   not part of check (a calibration instrument)\n", "");
        }
        for (const auto& [name, value] : c.params) {
            const bool whole = value == static_cast<double>(static_cast<int64_t>(value));
            std::printf("%20s   --arg %s=%s\n", "", name.c_str(),
                        whole ? std::to_string(static_cast<int64_t>(value)).c_str() : nlohmann::json(value).dump().c_str());
        }
    }
    if (o.json) std::cout << list.dump(2) << "\n";
    return 0;
}

}  // namespace pfsim

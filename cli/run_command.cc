// pfsim run KERNEL|CASE.toml: parses the options into an api::RunSpec, runs it
// (session/run.h), measures the advisor's what-ifs through the executor,
// prints the result. pfsim run-request: the executor's child, one spec on stdin.
#include <algorithm>
#include <cstdio>
#include <functional>
#include <iostream>
#include <iterator>

#include <nlohmann/json.hpp>

#include "session/faults.h"
#include "session/run.h"
#include "session/replay_run.h"
#include "session/run_spec.h"
#include "session/session.h"
#include "cli/children.h"
#include "cli/commands.h"
#include "cli/options.h"

namespace pfsim {

namespace {

// The run's exit status, or the sanitizer's `error_exitcode` for a run that
// passed with sanitizer errors.
int run_status(const api::RunResult& r, const SanitizeOptions& sanitize) {
    if (r.exit_status() == 0 && r.sanitized && r.sanitizer.count(insight::Severity::Error) > 0) return sanitize.error_exitcode;
    return r.exit_status();
}

// Prints a run's result (--json: the summary) and what users' code and the
// runtime said on stderr; the run's exit status, or the sanitizer's
// `error_exitcode` for a run that passed with sanitizer errors.
int report_run(const api::RunResult& r, const Config& cfg, bool json, const SanitizeOptions& sanitize) {
    const std::string prefetch = r.prefetch ? "on" : "off";
    if (json) {
        std::cout << api::to_json(r, cfg).dump(2) << "\n";
    } else {
        std::printf("kernel           %s (prefetch %s)\n", r.name.c_str(), prefetch.c_str());
        if (r.ran) {
            const auto& l2 = r.counters["l2"];
            std::printf("kernel time      %.3f us (%llu cycles)\n", r.kernel_time_ns / 1e3,
                        static_cast<unsigned long long>(r.cycles));
            std::printf("l2               %llu hits, %llu misses (hit rate %.1f %%), %llu prefetched lines\n",
                        l2["hits"].get<unsigned long long>(), l2["misses"].get<unsigned long long>(),
                        100 * r.l2_hit_rate(), l2["prefetch_lines"].get<unsigned long long>());
            std::printf("gm               %llu B read, %llu B written\n",
                        r.counters["gm"]["read_bytes"].get<unsigned long long>(),
                        r.counters["gm"]["write_bytes"].get<unsigned long long>());
            std::printf("sdma             %llu requests\n", r.counters["sdma"]["requests"].get<unsigned long long>());
            if (r.counters["sdma"]["requests"].get<uint64_t>() > 0) {
                const uint64_t request = cfg.bytes("prefetch.request_bytes");
                std::printf("prefetch         protocol %s, requests of up to %llu %s\n",
                            cfg.choice("prefetch.protocol").c_str(),
                            static_cast<unsigned long long>(request % (1 << 20) ? request : request >> 20),
                            request % (1 << 20) ? "B" : "MiB");
            }
            if (r.task_count) std::printf("tasks            %zu (--json lists them)\n", r.task_count);
            for (const api::OutputResult& out : r.outputs) {
                std::printf("output %-9s sha256 %s%s\n", out.name.c_str(), out.sha256.c_str(),
                            out.equal_reference ? "" : "  DIFFERS FROM THE REFERENCE");
            }
        }
        if (!r.warmup.empty()) std::printf("warm-up          %s\n", r.warmup.c_str());
        for (const std::string& w : r.waves) std::printf("waves            %s\n", w.c_str());
        for (const std::string& f : api::FaultReport::text(r.faults)) std::printf("fault            %s\n", f.c_str());
        if (!r.teardown.is_null()) {
            for (const nlohmann::json& s : r.teardown["steps"]) {
                std::printf("teardown         %s (%.3f s)\n", s["step"].get<std::string>().c_str(), s["ns"].get<double>() / 1e9);
            }
        }
        if (r.advised) std::printf("\n%s", r.advisor.text().c_str());
    }
    for (const std::string& line : r.log) {  // the orchestration's LOG_ERROR and LOG_WARN (--json: all of `log`)
        if (line.rfind("ERROR ", 0) == 0 || line.rfind("WARN ", 0) == 0) std::cerr << "pfsim: " << r.name << ": orchestration: " << line << "\n";
    }
    if (!r.user_stdout.empty()) {
        std::cerr << "pfsim: " << r.name << ": users' code printed to stdout (shown here, not on pfsim's stdout):\n"
                  << r.user_stdout << (r.user_stdout.back() == '\n' ? "" : "\n");
    }
    for (size_t i = 0; i < r.warnings.size() && i < 5; ++i) std::cerr << "pfsim: warning: " << r.warnings[i] << "\n";
    if (r.warnings.size() > 5) std::cerr << "pfsim: (" << r.warnings.size() - 5 << " more warnings in --json)\n";
    for (const std::string& v : r.violations) std::cerr << "pfsim: " << r.name << ": protocol violation: " << v << "\n";
    if (!r.error.empty()) std::cerr << "pfsim: " << r.name << ": " << r.error << "\n";
    if (r.ran && !r.reference_equal) std::cerr << "pfsim: " << r.name << ": output differs from the reference\n";
    if (r.sanitized) std::cerr << r.sanitizer.text(sanitize.print_limit);
    return run_status(r, sanitize);
}

// The progress line of a run of `name` still going ("pfsim: NAME: still
// running, 12.500 us simulated so far"), on stderr.
std::function<void(double)> still_running(const std::string& name) {
    return [name](double ns) {
        std::fprintf(stderr, "pfsim: %s: still running, %.3f us simulated so far\n", name.c_str(), ns / 1e3);
    };
}

// What the advisor's measured what-ifs start from: the same case, arguments,
// SDMA and warm-up choices and configuration, nothing observed or injected.
api::RunSpec what_if_base(const api::RunSpec& spec, bool prefetch) {
    api::RunSpec base;
    base.config = spec.config;
    base.run.target = spec.run.target;
    base.run.kernel_args = spec.run.kernel_args;
    base.run.enable_sdma = spec.run.enable_sdma;
    base.run.warmup = spec.run.warmup;
    base.run.prefetch = prefetch;
    return base;
}

}  // namespace

int cmd_run(const std::vector<std::string>& args) {
    std::vector<std::string> flags = {"--no-sdma", "--no-warmup", "--advise", "--no-what-if"};
    std::vector<std::string> valued = {"--prefetch", "--arg", "--inject", "--trace", "--waves", "--outputs",
                                       "--drop-prefetch", "--free-prefetch", "--warm-loads", "--bypass-loads", "--progress",
                                       "--timeout"};
    flags.insert(flags.end(), kSanitizeFlags.begin(), kSanitizeFlags.end());
    valued.insert(valued.end(), kSanitizeValues.begin(), kSanitizeValues.end());
    CommonOptions o = parse_options(args, flags, valued);
    const SanitizeOptions sanitize = sanitize_options(o);
    if (o.positional.size() != 1) throw UsageError("run takes exactly one kernel name or case file");
    api::RunSpec spec;
    spec.config = config_choice(o);
    const Config cfg = resolve_config(o);
    api::RunRequest& request = spec.run;
    request.target = o.positional[0];
    request.target = api::resolve_target(request.is_case() ? user_path(request.target) : request.target);
    request.kernel_args = o.values["--arg"];
    const std::string prefetch = value_of(o, "--prefetch", "on");
    if (prefetch != "on" && prefetch != "off") throw UsageError("--prefetch takes on or off, not '" + prefetch + "'");
    request.prefetch = prefetch == "on";
    request.enable_sdma = !has_flag(o, "--no-sdma");
    request.warmup = !has_flag(o, "--no-warmup");
    request.faults = o.values["--inject"];
    request.trace = user_path(value_of(o, "--trace", ""));
    request.waves = value_of(o, "--waves", "");
    request.outputs_dir = user_path(value_of(o, "--outputs", ""));
    refuse_overwriting_an_input(o, "--trace", request.trace);  // the case's own inputs: api::run
    request.sanitize = sanitize.on;
    request.suppressions = sanitize.suppressions;
    request.advise = has_flag(o, "--advise");
    request.dropped_sites = o.values["--drop-prefetch"];
    request.free_sites = o.values["--free-prefetch"];
    request.warm_load_sites = o.values["--warm-loads"];
    request.around_load_sites = o.values["--bypass-loads"];
    // A long run says on stderr that it is still going (every --progress seconds; 0: never).
    request.progress_ms = progress_option_ms(o);
    request.task_records = o.json;  // the text summary gives their count only
    if (request.progress_ms > 0) request.progress = still_running(o.positional[0]);  // as the user named it

    api::RunResult r = api::Session(cfg).run(request);
    if (r.advised && r.ran && r.error.empty() && !has_flag(o, "--no-what-if")) {
        // The advisor's measured what-ifs: the same run with prefetch off; with
        // prefetch off and every core access an L2 hit; and, per advised site
        // (at most kMaxSiteWhatIfs), this run without that site's prefetches.
        api::RunSpec ideal = what_if_base(spec, false);
        ideal.config.sets.push_back("l2.demand=ideal");
        std::vector<api::RunSpec> runs = {what_if_base(spec, false), ideal};
        const std::vector<SiteWhatIf> what_ifs = site_what_ifs(r.advisor);
        for (const SiteWhatIf& w : what_ifs) {
            runs.push_back(what_if_base(spec, request.prefetch));
            runs.back().run.dropped_sites = request.dropped_sites;
            w.apply_to(runs.back().run);
        }
        const std::vector<ChildRun> children = run_children(runs, 2);
        r.advisor.what_if = measured_what_if(run_result(children[0]), r, run_result(children[1]));
        std::vector<api::RunResult> measured;
        for (size_t i = 2; i < children.size(); ++i) measured.push_back(run_result(children[i]));
        record_site_what_ifs(r.advisor, what_ifs, measured);
    }
    return report_run(r, cfg, o.json, sanitize);
}

int cmd_run_request(const std::vector<std::string>& args) {
    if (!args.empty()) throw UsageError("run-request takes no argument: it reads one run spec (JSON) on stdin");
    const std::string text((std::istreambuf_iterator<char>(std::cin)), std::istreambuf_iterator<char>());
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded()) throw api::BadInput("run-request: stdin holds no JSON document");
    api::RunSpec spec = api::run_spec_from_json(j);
    const Config cfg = spec.config.resolve();
    api::Session session(cfg);
    if (spec.is_replay) return print_replay(session.replay(spec.replay), true);
    if (spec.run.progress_ms > 0) spec.run.progress = still_running(spec.run.target);
    return report_run(session.run(spec.run), cfg, true, SanitizeOptions{});
}

int run_spec_here(const api::RunSpec& spec, nlohmann::json* summary) {
    const Config cfg = spec.config.resolve();
    api::Session session(cfg);
    if (spec.is_replay) {
        *summary = session.replay(spec.replay);
        return replay_status(*summary);
    }
    const api::RunResult r = session.run(spec.run);
    *summary = api::to_json(r, cfg);
    return run_status(r, SanitizeOptions{});
}

}  // namespace pfsim

#include "cli/commands.h"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "base/tile_threads.h"
#include "session/run.h"
#include "session/summary.h"
#include "cli/exit_status.h"
#include "cli/options.h"
#include "model/config/config.h"

namespace pfsim {

namespace {

const char* kUsage = R"(pfsim - a cycle-approximate simulator of the Ascend a2a3 GM -> L2 prefetch path

usage: pfsim COMMAND [options]

commands:
  check [KERNEL | CASE.toml ...] [--arg NAME=VALUE]... [--json] [--junit FILE] [--strict-gain] [--inject FAULT] [--trace PREFIX]
      [--sanitize [--error-exitcode N] [--print-limit N] [--suppressions FILE]] [--advise]
      [--out DIR] [--slurm --out DIR [--partition P] [--slurm-opt OPT]... [--chunk N] [--wait]]
      [--progress SECONDS] [--timeout SECONDS]
  check --collect DIR [--json] [--junit FILE] [--strict-gain]
  check [KERNEL | CASE.toml ...] --uncertainty [--vary KEY,...] [--arg NAME=VALUE]... [--json]
                    run each kernel or case with prefetch off and on: outputs must be
                    bit-identical and equal to the reference or golden (default: every
                    shipped kernel and case); --arg sets a [params] value of every case
                    named (each must have it); --sanitize and --advise look at the
                    prefetch-on run; --out DIR, --slurm and --collect DIR as for sweep
                    (each kernel or case a point; not with --advise on Slurm); a
                    run still going after --progress seconds (10; 0: never) says so
                    on stderr with its arguments, and again; --uncertainty: the check
                    again at each end of every parameter's plausible range (the
                    preset's [ranges]; --vary picks some), one at a time, then at
                    the combinations pushing each gain lowest and highest: each gain
                    as a range, the parameter moving it most, whether its sign holds
  run KERNEL|CASE.toml [--prefetch on|off] [--arg NAME=VALUE]... [--json] [--inject FAULT]
      [--trace FILE.json] [--waves FILE.vcd|FILE.fst] [--outputs DIR]
      [--sanitize [--error-exitcode N] [--print-limit N] [--suppressions FILE]] [--advise [--no-what-if]]
      [--drop-prefetch FILE:LINE]... [--free-prefetch FILE:LINE]... [--warm-loads FILE:LINE]...
      [--bypass-loads FILE:LINE]...
      [--timeout SECONDS]
                    run one kernel, or a case file (an orchestration and its incores
                    from source, docs/cases.md), on the simulated die; --outputs writes
                    a case's outputs as DIR/NAME.npy; --waves dumps the signals of
                    the RTL blocks in the loop (--set sdma.frontend=rtl, l2.tags=rtl);
                    --sanitize reports misused prefetches at their source lines on
                    stderr (docs/sanitizer.md) and exits N (default 1) on an error;
                    --advise: per prefetch site, what its lines did and what to
                    change, per load site its misses, with measured re-runs (prefetch
                    off; every core access an L2 hit: the most any prefetch can gain;
                    each advised site removed, and its lines resident at no cost)
                    (docs/advisor.md); --drop-prefetch: prefetches from that line of
                    a kernel's source are no-ops; --free-prefetch: they make their
                    region resident at no cost instead; --warm-loads: loads from that
                    line find their region resident; --bypass-loads: loads from that
                    line read around the L2 (as TLOAD<TLoadL2Hint::NotAllocKeep>); --inject FAULT (repeatable):
                    prefetch-corrupt, skip-wait, sdma-error[:K], sdma-stall,
                    doorbell-lost[:K], core-fault[:CORE], reset-fail[:K]
                    (docs/runtime.md); the summary's `faults` says which channel,
                    request and post each hit, `teardown` how the worker closed
                    after a fatal error
  compile SOURCE... [--core aiv|aic | --orchestration] [-I DIR]... [--print-command] [--json]
                    build sources through the compile cache against pfsim's onboard
                    headers; exit 2 with the compiler's messages when one does not build
  case-data CASE.toml [--arg NAME=VALUE]... [--out DIR]
                    what the case file describes, as JSON (its callable, tensors, scalars);
                    --out: each tensor's initial values and each output's golden as .npy
                    (the derived scene test of a case: pfsim.testing.CaseFileTest)
  test PATH... [pytest options]
                    run Python scene tests (docs/python.md) under pytest: each case with
                    prefetch off and on, on fresh simulated dies; the gain per case
  python-path       the folder holding the pfsim Python package (for PYTHONPATH)
  device [--enable-sdma] [--ranks N] --in-fd N --out-fd M
                    a persistent simulated die serving the Python package's Worker
                    (--ranks: N dies of one simulation, for pfsim.level3)
  kernels           list the kernels, their arguments and expected gains
  diff A B [--json] [--max-regression PCT]
                    compare two summaries, check reports, traces or onboard profiles:
                    time per kernel, busy time per lane, counters; exit 1 when B is
                    more than PCT % slower than A
  sweep KERNEL|CASE.toml --grid KEY=V1,V2,... [--grid ...] [--jobs N] [--out DIR] [--csv FILE] [--html FILE]
      [--progress SECONDS] [--timeout SECONDS] [--slurm --out DIR [--partition P] [--slurm-opt OPT]... [--chunk N] [--wait]]
  sweep --collect DIR [--csv FILE] [--html FILE]
                    the cartesian product of the grids (configuration keys, or arg.NAME
                    for kernel arguments), each point with prefetch off and on, in N
                    worker processes; one CSV row per point; a failing point keeps its
                    error in the CSV and does not stop the others; --out keeps each
                    point in DIR as it ends, and the same command again runs only the
                    points not done; --slurm submits them as one Slurm job array
                    (docs/sweeps.md) and prints its job id, --wait follows it and
                    collects; --collect assembles the CSV from DIR
  calibrate [--only ID,...] [--jobs N] [--json] [--html FILE] [--table FILE]
                    microbenchmarks against the published a2a3 figures; exit 1 when
                    any is out of tolerance; --html adds bandwidth and working-set curves;
                    --table measures the figures of a TOML table instead of the built-in
                    one (calibration/figures.toml; docs/calibration.md, "The table")
  report A [B] --html FILE
                    a self-contained HTML page: time per kernel, busy time per lane,
                    L2 hit rate and GM/SDMA bandwidth over time
  replay FILE [--json] [--verify] [--progress] [--trace FILE.json]
                    replay a memory trace (R|W|P <hex address> <bytes> per line)
  config [--json | --markdown]
                    print the resolved configuration (--markdown: the reference table)
  stats [--json | --markdown]
                    every counter and lane a run's summary shows: key, unit, meaning
  help              this text
  batch-task DIR K  what a Slurm array task of submission K runs (written by sweep --slurm)
  run-request       one run spec (JSON, docs/architecture.md) read on stdin, its summary
                    printed: what check, sweep and calibrate run in each child process

options shared by every command:
  --preset NAME     start from an embedded preset (default: a2a3)
  --config FILE     override parameters from a TOML file (repeatable)
  --set KEY=VALUE   override one parameter, e.g. --set l2.size=96MiB (repeatable)
  --json            machine-readable output
  --timeout SECONDS (run, check, sweep) the host time users' code may take: a
                    kernel, orchestration or golden still running then is stopped
                    and named, exit 1 (orch.host_time_limit, 1800 s; 0: no limit)

exit status: 0 success, 1 a check failed, 2 bad input, 3 an internal error of pfsim
)";

}  // namespace

int cmd_config(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--markdown"});
    if (!o.positional.empty()) throw UsageError("config takes no file argument");
    if (o.json && has_flag(o, "--markdown")) throw UsageError("config takes --json or --markdown, not both");
    Config cfg = resolve_config(o);
    if (has_flag(o, "--markdown")) {
        std::cout << cfg.to_markdown();
    } else if (o.json) {
        std::cout << cfg.to_json().dump(2) << "\n";
    } else {
        std::cout << cfg.to_toml();
    }
    return 0;
}

int cmd_stats(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--markdown"});
    if (!o.positional.empty()) throw UsageError("stats takes no file argument");
    if (o.json && has_flag(o, "--markdown")) throw UsageError("stats takes --json or --markdown, not both");
    if (has_flag(o, "--markdown")) {
        std::cout << summary_stats_markdown();
    } else if (o.json) {
        nlohmann::json j = nlohmann::json::array();
        for (const SummaryStat& s : summary_stats()) {
            j.push_back({{"key", s.key}, {"unit", s.info.unit}, {"description", s.info.description}, {"derived", s.info.derived}});
        }
        std::cout << j.dump(2) << "\n";
    } else {
        size_t width = 0;
        for (const SummaryStat& s : summary_stats()) width = std::max(width, s.key.size());
        for (const SummaryStat& s : summary_stats()) {
            std::cout << s.key << std::string(width + 2 - s.key.size(), ' ') << s.info.unit
                      << std::string(s.info.unit.size() < 9 ? 9 - s.info.unit.size() : 1, ' ') << s.info.description << "\n";
        }
    }
    return 0;
}

int run_cli(const std::vector<std::string>& args) {
    if (args.empty()) {  // a usage error: the text to stderr, stdout stays empty
        std::cerr << kUsage;
        return 2;
    }
    if ((args[0] == "help" || args[0] == "--help" || args[0] == "-h") && args.size() == 1) {
        std::cout << kUsage;
        return 0;
    }
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    return run_guarded([&] {
        tile_threads();  // a bad PFSIM_TILE_THREADS is refused before any work
        if (args[0] == "config") return cmd_config(rest);
        if (args[0] == "stats") return cmd_stats(rest);
        if (args[0] == "replay") return cmd_replay(rest);
        if (args[0] == "run") return cmd_run(rest);
        if (args[0] == "check") return cmd_check(rest);
        if (args[0] == "kernels") return cmd_kernels(rest);
        if (args[0] == "diff") return cmd_diff(rest);
        if (args[0] == "report") return cmd_report(rest);
        if (args[0] == "sweep") return cmd_sweep(rest);
        if (args[0] == "calibrate") return cmd_calibrate(rest);
        if (args[0] == "compile") return cmd_compile(rest);
        if (args[0] == "case-data") return cmd_case_data(rest);
        if (args[0] == "device") return cmd_device(rest);
        if (args[0] == "test") return cmd_test(rest);
        if (args[0] == "python-path") return cmd_python_path(rest);
        if (args[0] == "batch-task") return cmd_batch_task(rest);
        if (args[0] == "run-request") return cmd_run_request(rest);
        if (args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
            throw UsageError(args[0] + " takes no argument (not '" + args[1] + "'; there is no --json form)");
        }
        throw UsageError("unknown command '" + args[0] + "' (see pfsim help)");
    }, std::cerr);
}

}  // namespace pfsim

// pfsim calibrate: microbenchmarks on the model against the published a2a3
// figures (shared a2a3-hardware.md), each with a tolerance and a verdict.
#include <unistd.h>

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

#include "cli/children.h"
#include "cli/commands.h"
#include "cli/options.h"
#include "cli/plot.h"
#include "loader/embedded_files.h"

namespace pfsim {

namespace {

// One figure: the runs it needs, and how its value comes out of their summaries.
struct Item {
    std::string id, what, unit, source;
    double published_low, published_high;  // a value within 5 %, or a published range
    std::vector<api::RunSpec> runs;
    std::function<double(const std::vector<nlohmann::json>&)> value;
};

// Figures the model is known not to meet, and why (docs/calibration.md): each
// is reported, but does not fail the run while it stays out of tolerance.
const std::map<std::string, std::string>& known_gaps() {
    static const std::map<std::string, std::string> gaps = {
        {"warm_issue_cost", "one core's 7 posts cost their protocol steps and 14 doorbell publications (about 2 us "
                            "each); the rest of the field's near-fixed ~20 us is in no modelled step"},
        {"l2_bypass_gain", "the model's L2 (LRU, or SRRIP) keeps the reused activations while 24 MiB of weights stream "
                           "between two of their loads: the allocating twin loses only each round's first activation "
                           "loads, not the field's 7.9 %; what evicts them on the card (its replacement) is not published"},
        {"setup_rounds_after_5", "a loop's warms reuse one channel, so only its first round pays the set-up; spreading "
                                 "them over the 48 channels cannot give 44 after 5 and none after 20 at once, and the "
                                 "field's current account (a few % of issues blocking for thousands of issues) is no "
                                 "one-time set-up: what causes it is not published"},
        {"l2_bypass_mte2", "as l2_bypass_gain: with the activations kept either way, a bypassed weight line costs its "
                           "MTE2 what an allocating one does (a miss's time), so the load side barely moves"},
    };
    return gaps;
}

double field(const nlohmann::json& j, const std::vector<std::string>& path) {
    const nlohmann::json* p = &j;
    for (const std::string& k : path) {
        if (!p->contains(k)) throw std::runtime_error("run summary has no " + k);
        p = &(*p)[k];
    }
    return p->get<double>();
}

// A run of a shipped case for the table, written as `run` would take it:
// "--arg", "NAME=VALUE" and "--set", "KEY=VALUE" pairs, and "--no-warmup".
// The command's own configuration options come after the table's sets.
api::RunSpec run(const std::string& kernel, const std::vector<std::string>& more) {
    api::RunSpec spec;
    spec.run.target = api::resolve_target(kernel);
    for (size_t i = 0; i < more.size(); ++i) {
        const bool pair = (more[i] == "--arg" || more[i] == "--set") && i + 1 < more.size();
        if (pair) {
            std::vector<std::string>& to = more[i] == "--arg" ? spec.run.kernel_args : spec.config.sets;
            to.push_back(more[i + 1]);
            ++i;
        } else if (more[i] == "--no-warmup") {
            spec.run.warmup = false;
        } else {
            throw std::logic_error("calibrate's table: '" + more[i] + "' in the runs of " + kernel);
        }
    }
    return spec;
}

// A replay of `trace` for the table.
api::RunSpec replay_run(const std::string& trace) {
    api::RunSpec spec;
    spec.is_replay = true;
    spec.replay.file = trace;
    spec.replay.label = trace;
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

// Task t's span in a run summary, in microseconds.
double task_us(const nlohmann::json& j, size_t t) {
    if (!j.contains("tasks") || j["tasks"].size() <= t) throw std::runtime_error("run summary has no task " + std::to_string(t));
    const nlohmann::json& task = j["tasks"][t];
    return (task.at("end_ns").get<double>() - task.at("start_ns").get<double>()) / 1e3;
}

double warmup_ms(const nlohmann::json& j) {
    const std::string s = j.at("warmup").get<std::string>();  // "48/48 channels warmed in 4.41702 ms"
    return std::stod(s.substr(s.find(" in ") + 4));
}

std::string write_trace(const std::string& dir, const std::string& name, const std::string& text) {
    const std::string path = dir + "/" + name;
    std::ofstream(path) << text;
    return path;
}

// Curves for the page: GM bandwidth against transfer size from 1, 8 and 48
// cores, and the second-pass L2 hit rate against the working-set size.
std::string curves(const CommonOptions& o, unsigned jobs, const std::function<std::string(uint64_t)>& trace) {
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
            runs.push_back(on_config(run("calib_stream", {"--arg", "cores=" + std::to_string(c), "--arg", "size=" + std::to_string(s),
                                                          "--arg", "bytes=" + std::to_string(bytes)}),
                                     o));
        }
    }
    for (uint64_t mib : sets) runs.push_back(on_config(replay_run(trace(mib)), o));
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
    CommonOptions o = parse_options(args, {}, {"--only", "--jobs", "--html"});
    const Config cfg = resolve_config(o);
    const double clock = cfg.frequency("chip.clock");
    const double gm_bw = 1.6e12;  // published, for the L2 ratio
    const std::string dir = make_temporary_folder("pfsim-calibrate");
    struct RemoveDir {  // on every way out: a bad --only, an interrupted child run
        const std::string& dir;
        ~RemoveDir() {
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } remove_dir{dir};
    // Working-set traces: read W twice; the second pass hits iff W fits in L2.
    auto hex_trace = [&](uint64_t mib) {
        std::ostringstream t;
        for (int pass = 0; pass < 2; ++pass) {
            for (uint64_t a = 0; a < (mib << 20); a += 1 << 20) t << "R 0x" << std::hex << a << std::dec << " 1048576\n";
        }
        return write_trace(dir, "ws" + std::to_string(mib) + ".trace", t.str());
    };
    std::string same_line;
    for (int i = 0; i < 2000; ++i) same_line += "R 0x1000 64\n";
    const std::string hit_trace = write_trace(dir, "hit.trace", same_line);
    std::string chase;  // traces/examples/pointer_chase.trace, as built in: calibrate runs from any directory
    for (const EmbeddedFile& f : embedded_files("traces")) {
        if (std::string(f.path) == "examples/pointer_chase.trace") chase.assign(f.content, f.size);
    }
    if (chase.empty()) throw std::runtime_error("pfsim was built without traces/examples/pointer_chase.trace");
    const std::string chase_trace = write_trace(dir, "pointer_chase.trace", chase);
    const double hit_ns = static_cast<double>(cfg.time("l2.hit_latency")) / 1e3;
    const double miss_ns =
        static_cast<double>(cfg.time("l2.hit_latency") + cfg.time("l2.miss_latency") + cfg.time("gm.read_latency")) / 1e3;

    auto gbps = [](const std::vector<nlohmann::json>& r) { return field(r[0], {"timed_pass", "gbps"}); };
    auto hit_rate_second_pass = [](const std::vector<nlohmann::json>& r) {
        // Half the accesses are the first pass (all misses): hits / half.
        return 2 * field(r[0], {"l2", "hits"}) / (field(r[0], {"l2", "hits"}) + field(r[0], {"l2", "misses"}));
    };
    std::vector<Item> items = {
        {"gm_per_core", "GM read bandwidth, one core, 64 KiB transfers", "B/cycle", "CFG 32 B/cycle per core",
         32 * 0.95, 32 * 1.05, {run("calib_stream", {"--arg", "cores=1"})},
         [&](const auto& r) { return gbps(r) * 1e9 / clock; }},
        {"gm_aggregate", "GM read bandwidth, 48 cores, 64 KiB transfers", "TB/s", "DOC about 1.6 TB/s",
         1.6 * 0.95, 1.6 * 1.05, {run("calib_stream", {"--arg", "cores=48", "--arg", "bytes=2MiB"})},
         [&](const auto& r) { return gbps(r) / 1e3; }},
        {"gm_16k_of_best", "GM bandwidth of 16 KiB transfers / of 1 MiB transfers, one core", "ratio",
         "DOC transfers over 16 KB reach the best bandwidth", 0.95, 1.0,
         {run("calib_stream", {"--arg", "cores=1", "--arg", "size=16KiB"}),
          run("calib_stream", {"--arg", "cores=1", "--arg", "size=1MiB"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "gbps"}) / field(r[1], {"timed_pass", "gbps"}); }},
        {"l2_read_per_core", "L2 read bandwidth, one core, resident data", "B/cycle", "CFG 110 B/cycle per core",
         110 * 0.95, 110 * 1.05, {run("calib_stream", {"--arg", "cores=1", "--arg", "warm=1"})},
         [&](const auto& r) { return gbps(r) * 1e9 / clock; }},
        {"l2_write_per_core", "L2 write bandwidth, one core, resident data", "B/cycle", "CFG 86 B/cycle per core",
         86 * 0.95, 86 * 1.05, {run("calib_stream", {"--arg", "cores=1", "--arg", "warm=1", "--arg", "write=1"})},
         [&](const auto& r) { return gbps(r) * 1e9 / clock; }},
        {"l2_read_aggregate", "L2 read bandwidth, 48 cores, resident data, / GM bandwidth", "x GM",
         "DOC pure read 3-4 x GM", 3.0, 4.0,
         {run("calib_stream", {"--arg", "cores=48", "--arg", "bytes=1MiB", "--arg", "warm=1"})},
         [&](const auto& r) { return gbps(r) * 1e9 / gm_bw; }},
        {"same_address", "48 cores reading one region / each its own, resident", "time ratio",
         "DOC same-address access is serialised, 10-20 % slower", 1.10, 1.20,
         {run("calib_stream", {"--arg", "cores=48", "--arg", "bytes=1MiB", "--arg", "warm=1", "--arg", "shared=1"}),
          run("calib_stream", {"--arg", "cores=48", "--arg", "bytes=1MiB", "--arg", "warm=1"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / field(r[1], {"timed_pass", "ns"}); }},
        {"working_set_160mib", "second-pass L2 hit rate, 160 MiB working set", "ratio", "CFG L2 192 MiB: it fits",
         0.99, 1.0, {replay_run(hex_trace(160))}, hit_rate_second_pass},
        {"working_set_256mib", "second-pass L2 hit rate, 256 MiB working set", "ratio",
         "LRU thrash beyond 192 MiB", 0.0, 0.01, {replay_run(hex_trace(256))}, hit_rate_second_pass},
        {"hit_latency", "dependent reads of one line, time per read", "ns", "the model's l2.hit_latency",
         hit_ns * 0.95, hit_ns * 1.05, {replay_run(hit_trace)},
         [&](const auto& r) { return field(r[0], {"sim_time_ns"}) / 2000; }},
        {"miss_latency", "pointer chase over 1 GiB, time per read", "ns",
         "the model's l2.hit_latency + l2.miss_latency + gm.read_latency", miss_ns * 0.95, miss_ns * 1.05,
         {replay_run(chase_trace)},
         [&](const auto& r) { return field(r[0], {"sim_time_ns"}) / 2000; }},
        {"sdma_peak", "SDMA prefetch of 256 MiB in one request", "GB/s", "MEAS about 280 GB/s peak",
         280 * 0.95, 280 * 1.05,
         {run("prefetch_wait", {"--arg", "bytes=256MiB", "--set", "prefetch.request_bytes=256MiB"})},
         [&](const auto& r) { return 256.0 * (1 << 20) / field(r[0], {"kernel_time_ns"}); }},
        {"sdma_request_overhead", "extra time per request: 64 MiB in 1 MiB vs in 64 MiB requests", "us",
         "MEAS about 0.7 us per request, not hidden", 0.7 * 0.95, 0.7 * 1.05,
         {run("prefetch_wait", {"--arg", "bytes=64MiB", "--set", "prefetch.request_bytes=1MiB"}),
          run("prefetch_wait", {"--arg", "bytes=64MiB", "--set", "prefetch.request_bytes=64MiB"})},
         [&](const auto& r) { return (field(r[0], {"kernel_time_ns"}) - field(r[1], {"kernel_time_ns"})) / 63 / 1e3; }},
        {"prefetch_4k_wait", "4 KiB prefetch + wait in a kernel, with the session already built", "us",
         "MEAS about 3 us", 3 * 0.95, 3 * 1.05,
         {run("prefetch_wait", {"--arg", "bytes=4KiB", "--arg", "rounds=2"}), run("prefetch_wait", {"--arg", "bytes=4KiB"})},
         [&](const auto& r) { return (field(r[0], {"kernel_time_ns"}) - field(r[1], {"kernel_time_ns"})) / 1e3; }},
        {"warmup_8_cores", "channel warm-up pass, 48 channels from 8 cores", "ms", "MEAS about 4.4 ms from 2-48 cores",
         4.4 * 0.95, 4.4 * 1.05, {run("prefetch_wait", {"--arg", "bytes=4KiB"})},
         [&](const auto& r) { return warmup_ms(r[0]); }},
        {"warmup_1_core", "channel warm-up pass, 48 channels from 1 core", "ms", "MEAS about 6.9 ms from one core",
         6.9 * 0.95, 6.9 * 1.05, {run("prefetch_wait", {"--arg", "bytes=4KiB", "--set", "prefetch.warmup_blocks=1"})},
         [&](const auto& r) { return warmup_ms(r[0]); }},
        {"cold_channel", "first prefetch on a cold channel, less the same when warm", "us",
         "MEAS about 92 us, serialised in the engine", 92 * 0.95, 92 * 1.05,
         {run("prefetch_wait", {"--arg", "bytes=4KiB", "--no-warmup"}), run("prefetch_wait", {"--arg", "bytes=4KiB"})},
         [&](const auto& r) { return (field(r[0], {"kernel_time_ns"}) - field(r[1], {"kernel_time_ns"})) / 1e3; }},
        // Field measurements (shared a2a3-hardware.md, "Field measurements"), each with its published tolerance.
        {"sdma_one_stream", "one prefetch stream: 150 MB warmed from one core and waited", "GB/s",
         "MEAS about 285 GB/s (pypto-lib #963)", 285 * 0.85, 285 * 1.15,
         {run("prefetch_wait", {"--arg", "bytes=150000000"})}, gbps},
        {"sdma_two_streams", "two prefetch streams at once: 2 x 75 MB from two cores, each its own context", "GB/s",
         "MEAS about 153 GB/s aggregate (pypto-lib #963)", 153 * 0.85, 153 * 1.15,
         {run("prefetch_wait", {"--arg", "bytes=150000000", "--arg", "cores=2"})}, gbps},
        {"sdma_second_stream", "aggregate of two streams / of one: a second stream must not add", "ratio",
         "MEAS 153 / 285 GB/s (pypto-lib #963); below 1", 0.0, 1.0,
         {run("prefetch_wait", {"--arg", "bytes=150000000", "--arg", "cores=2"}),
          run("prefetch_wait", {"--arg", "bytes=150000000"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "gbps"}) / field(r[1], {"timed_pass", "gbps"}); }},
        {"warm_issue_cost", "core time of a 150 MB warm in 7 prefetches, no wait", "us",
         "MEAS about 20 us (pypto-lib #963)", 20 * 0.75, 20 * 1.25,
         {run("prefetch_wait", {"--arg", "bytes=150000000", "--arg", "part=21428576", "--arg", "wait=0"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / 1e3; }},
        {"warm_issue_64m_32m", "one 64 MiB + one 32 MiB prefetch, no wait, in each of 16 warm scopes at once: core time (mean)", "us",
         "MEAS about 24 us (pto-isa #307: 16 warm scopes)", 24 * 0.75, 24 * 1.25,
         {run("prefetch_wait",
              {"--arg", "bytes=1536MiB", "--arg", "part=64MiB", "--arg", "wait=0", "--arg", "cores=16", "--arg",
               "scopes=1"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "mean_interval_ns"}) / 1e3; }},
        // The pypto-lib l2-prefetch guide's figures (shared a2a3-hardware.md, its newer rows). Two warm scopes at
        // once in a fresh process (sdma.channel_setup=pending): each core's first prefetch pays the channel's
        // set-up, one at a time in the engine, so the second scope starts streaming after two set-ups.
        {"two_scopes_first", "two warm scopes at once, fresh process: the 67.1 MB scope (prefetch + wait)", "GB/s",
         "MEAS about 122 GB/s, 67.1 MB in 552 us (pypto-lib l2-prefetch guide)", 122 * 0.85, 122 * 1.15,
         {run("prefetch_wait", {"--arg", "bytes=100700000", "--arg", "lead=67100000", "--arg", "cores=2", "--arg",
                                "scopes=1", "--set", "sdma.channel_setup=pending"})},
         [&](const auto& r) { return 67.1e9 / task_us(r[0], 0) / 1e6; }},
        {"two_scopes_second", "the same: the 33.6 MB scope", "GB/s",
         "MEAS about 52 GB/s, 33.6 MB in 649 us (pypto-lib l2-prefetch guide)", 52 * 0.85, 52 * 1.15,
         {run("prefetch_wait", {"--arg", "bytes=100700000", "--arg", "lead=67100000", "--arg", "cores=2", "--arg",
                                "scopes=1", "--set", "sdma.channel_setup=pending"})},
         [&](const auto& r) { return 33.6e9 / task_us(r[0], 1) / 1e6; }},
        {"two_scopes_together", "the same: both scopes' 100.7 MB over their union", "GB/s",
         "MEAS about 153 GB/s, 100.7 MB in 660 us (pypto-lib l2-prefetch guide)", 153 * 0.85, 153 * 1.15,
         {run("prefetch_wait", {"--arg", "bytes=100700000", "--arg", "lead=67100000", "--arg", "cores=2", "--arg",
                                "scopes=1", "--set", "sdma.channel_setup=pending"})},
         gbps},
        {"channel_setup_first", "first prefetch (4 KiB + wait) of a vector core in a fresh process, less the same set up",
         "us", "MEAS about 150-500 us of one-time channel set-up (pypto-lib l2-prefetch guide)", 150, 500,
         {run("prefetch_wait", {"--arg", "bytes=4KiB", "--set", "sdma.channel_setup=pending"}),
          run("prefetch_wait", {"--arg", "bytes=4KiB"})},
         [&](const auto& r) { return (field(r[0], {"kernel_time_ns"}) - field(r[1], {"kernel_time_ns"})) / 1e3; }},
        // A benchmark loop in a fresh process: of the rounds after W warm-up rounds, those whose warm paid a
        // channel set-up (each set-up is one contaminated round). pfsim's loop: one 4 KiB warm + wait a round.
        {"setup_rounds_after_5", "benchmark loop, fresh process, 5 warm-up rounds: of the next 100, rounds paying a channel set-up",
         "rounds", "MEAS about 44 of 100 with about 48 channels (pypto-lib l2-prefetch guide), to an order of magnitude",
         4.4, 100,
         {run("prefetch_wait", {"--arg", "bytes=4KiB", "--arg", "rounds=105", "--set", "sdma.channel_setup=pending"}),
          run("prefetch_wait", {"--arg", "bytes=4KiB", "--arg", "rounds=5", "--set", "sdma.channel_setup=pending"})},
         [&](const auto& r) { return field(r[0], {"sdma", "channel_setups"}) - field(r[1], {"sdma", "channel_setups"}); }},
        {"setup_rounds_after_20", "the same with 20 warm-up rounds", "rounds",
         "MEAS none: every warm lands in 25-40 us (pypto-lib l2-prefetch guide)", 0, 0,
         {run("prefetch_wait", {"--arg", "bytes=4KiB", "--arg", "rounds=120", "--set", "sdma.channel_setup=pending"}),
          run("prefetch_wait", {"--arg", "bytes=4KiB", "--arg", "rounds=20", "--set", "sdma.channel_setup=pending"})},
         [&](const auto& r) { return field(r[0], {"sdma", "channel_setups"}) - field(r[1], {"sdma", "channel_setups"}); }},
        {"warm_issue_in_scope", "core time of a 150 MB warm in 7 prefetches, no wait (warm_issue_cost's run)", "us",
         "MEAS about 18-26 us (pypto-lib l2-prefetch guide), +-25 %", 18 * 0.75, 26 * 1.25,
         {run("prefetch_wait", {"--arg", "bytes=150000000", "--arg", "part=21428576", "--arg", "wait=0"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / 1e3; }},
        {"warm_issue_bytes", "the same warm's core time: 150 MB / 15 MB, in 7 prefetches each", "ratio",
         "MEAS nearly independent of the bytes (pypto-lib l2-prefetch guide), +-25 %", 0.75, 1.25,
         {run("prefetch_wait", {"--arg", "bytes=150000000", "--arg", "part=21428576", "--arg", "wait=0"}),
          run("prefetch_wait", {"--arg", "bytes=15000000", "--arg", "part=2142858", "--arg", "wait=0"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / field(r[1], {"timed_pass", "ns"}); }},
        {"resident_warm", "a warm of 100 MB already resident in L2: the second of two rounds (prefetch + wait)", "us",
         "MEAS about 35 us (pypto-lib l2-prefetch guide), +-30 %", 35 * 0.7, 35 * 1.3,
         {run("prefetch_wait", {"--arg", "bytes=100000000", "--arg", "rounds=2"}),
          run("prefetch_wait", {"--arg", "bytes=100000000"})},
         [&](const auto& r) { return (field(r[0], {"kernel_time_ns"}) - field(r[1], {"kernel_time_ns"})) / 1e3; }},
        {"l2_benefit_16k", "16 KiB as 16 x 1 KiB TLOADs + MTE2->S flag: cold / after prefetch + wait", "x faster",
         "MEAS 2.26x (pto-isa 7ddaa823)", 2.26 * 0.75, 2.26 * 1.25,
         {run("l2_benefit", {"--arg", "measure=0"}), run("l2_benefit", {"--arg", "measure=1"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / field(r[1], {"timed_pass", "ns"}); }},
        // Loads around the L2 (TLOAD<TLoadL2Hint::NotAllocKeep>): the routed-expert INT8 weight stream, weights
        // allocating (mode 0) against around the L2 (mode 1); the second of two rounds is the timed pass, and a
        // core's MTE2 time (its rate's share and its loads' stalls) of that round is the two-round run's less
        // the one-round run's.
        {"l2_bypass_gain", "routed-expert INT8 weight stream, 2nd round: weights around the L2 against allocating",
         "% faster", "MEAS 7.9 % (pypto #2680), +-30 %", 7.9 * 0.7, 7.9 * 1.3,
         {run("l2_bypass", {"--arg", "mode=0"}), run("l2_bypass", {"--arg", "mode=1"})},
         [&](const auto& r) { return 100 * (1 - field(r[1], {"timed_pass", "ns"}) / field(r[0], {"timed_pass", "ns"})); }},
        {"l2_bypass_mte2", "the same: 2nd round's MTE2 busy, weights around the L2 / allocating", "ratio",
         "MEAS 0.965 (PTOAS #1356), +-30 % of the 3.5 % saved", 1 - 0.035 * 1.3, 1 - 0.035 * 0.7,
         {run("l2_bypass", {"--arg", "mode=0"}), run("l2_bypass", {"--arg", "mode=1"}),
          run("l2_bypass", {"--arg", "mode=0", "--arg", "rounds=1"}),
          run("l2_bypass", {"--arg", "mode=1", "--arg", "rounds=1"})},
         [&](const auto& r) {
             auto mte2 = [&](const nlohmann::json& j) { return field(j, {"cores", "mte2"}) + field(j, {"cores", "l2_stall"}); };
             return (mte2(r[1]) - mte2(r[3])) / (mte2(r[0]) - mte2(r[2]));
         }},
        {"first_run_1_channel", "protocol 2026-07 (no warm-up): 64 MiB in 1 MiB requests + wait, 1 core", "ms",
         "MEAS 0.4-4.2 ms blocked (pto-isa #242), to an order of magnitude", 0.04, 42,
         {run("prefetch_wait", {"--set", "prefetch.protocol=2026-07", "--set", "prefetch.request_bytes=1MiB", "--arg", "bytes=64MiB"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / 1e6; }},
        {"first_run_more_channels", "the same from 8 cores on 8 cold channels / from 1", "ratio",
         "MEAS longer with more channels (pto-isa #242): above 1", 1.0, 105,
         {run("prefetch_wait", {"--set", "prefetch.protocol=2026-07", "--set", "prefetch.request_bytes=1MiB", "--arg", "bytes=64MiB", "--arg", "cores=8"}),
          run("prefetch_wait", {"--set", "prefetch.protocol=2026-07", "--set", "prefetch.request_bytes=1MiB", "--arg", "bytes=64MiB"})},
         [&](const auto& r) { return field(r[0], {"timed_pass", "ns"}) / field(r[1], {"timed_pass", "ns"}); }},
    };
    std::set<std::string> only;
    std::stringstream list(value_of(o, "--only", ""));
    for (std::string id; std::getline(list, id, ',');) {
        bool known = false;
        for (const Item& i : items) known |= i.id == id;
        if (!known) throw UsageError("--only: unknown figure '" + id + "'");
        only.insert(id);
    }
    // Each distinct run once, however many figures read it.
    std::vector<api::RunSpec> runs;
    std::map<std::string, size_t> run_index;  // by the spec's JSON
    std::vector<const Item*> chosen;
    std::vector<std::vector<size_t>> item_runs;
    for (const Item& i : items) {
        if (!only.empty() && !only.count(i.id)) continue;
        chosen.push_back(&i);
        item_runs.emplace_back();
        for (const api::RunSpec& spec : i.runs) {
            const api::RunSpec r = on_config(spec, o);
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
        const Item* i = chosen[n];
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
                v = i->value(summaries);
            } catch (const std::exception& e) {
                error = e.what();
            }
        }
        const double mid = (i->published_low + i->published_high) / 2;
        const bool pass = error.empty() && v >= i->published_low && v <= i->published_high;
        const auto known = known_gaps().find(i->id);
        const bool gap = !pass && error.empty() && known != known_gaps().end();
        failed += pass || gap ? 0 : 1;
        gaps += gap ? 1 : 0;
        char published[64];
        std::snprintf(published, sizeof published, "%.4g..%.4g", i->published_low, i->published_high);
        rows.push_back({{"id", i->id}, {"what", i->what}, {"simulated", v}, {"unit", i->unit},
                        {"published", {i->published_low, i->published_high}}, {"source", i->source},
                        {"ratio", mid != 0 ? v / mid : 0.0}, {"pass", pass}, {"error", error},
                        {"known_gap", gap ? known->second : ""}});
        if (!o.json) {
            const char* verdict = pass ? "ok" : gap ? "out: known gap" : "OUT OF TOLERANCE";
            std::printf("%-22s %12.4g %-10s %-22s %8.3f  %s%s\n", i->id.c_str(), v, i->unit.c_str(), published,
                        mid != 0 ? v / mid : 0.0, verdict, error.empty() ? "" : (": " + error).c_str());
        }
    }
    const std::string html = value_of(o, "--html", "");
    if (!html.empty()) {
        write_output(html, html_page("pfsim calibrate", curves(o, jobs, hex_trace)));
    }
    for (const char* f : {"hit.trace", "pointer_chase.trace", "ws160.trace", "ws256.trace"}) std::remove((dir + "/" + f).c_str());
    for (uint64_t mib : {32, 64, 128, 160, 192, 224, 256, 384, 512}) {
        std::remove((dir + "/ws" + std::to_string(mib) + ".trace").c_str());
    }
    rmdir(dir.c_str());
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

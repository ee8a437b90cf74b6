// End-to-end tests of the pfsim binary: exit codes, messages, JSON, determinism.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <sys/stat.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

using pfsim::test::pfsim;
using pfsim::test::Result;
using pfsim::test::slurp;
using pfsim::test::tmp;
using pfsim::test::write_file;

std::string write_trace(const std::string& name, const std::string& text) {
    return pfsim::test::write_file(name, text);
}

TEST(Replay, ExampleTraceCountsAreExact) {
    const Result r = pfsim("replay traces/examples/stream_prefetch.trace --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schema"], "pfsim.summary/1");
    EXPECT_EQ(j["l2"]["hits"], 16512);           // 2nd pass 8192 + prefetched 8192 + 128 written
    EXPECT_EQ(j["l2"]["misses"], 8320);          // 1st pass 8192 + 128 written
    EXPECT_EQ(j["l2"]["writebacks"], 0);
    EXPECT_EQ(j["l2"]["prefetch_lines"], 8192);
    EXPECT_EQ(j["gm"]["read_bytes"], 8u << 20);  // misses and prefetch fills
    EXPECT_EQ(j["gm"]["write_bytes"], 0);
    EXPECT_EQ(j["sdma"]["prefetch_requests"], 1);  // 4 MiB: one request of up to prefetch.request_bytes
    EXPECT_GT(j["sim_time_ns"].get<double>(), 0.0);
    EXPECT_EQ(j["config"]["l2.size"], 192u << 20);
    EXPECT_EQ(j["config"]["preset"], "a2a3");
}

TEST(Replay, WritebacksAreCounted) {
    const Result r = pfsim("replay traces/examples/writeback.trace --json --set l2.size=48MiB");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    // 48 MiB = 98304 lines; 524288 lines written then read.
    EXPECT_EQ(j["l2"]["misses"], 2 * 524288);
    EXPECT_EQ(j["l2"]["writebacks"], 524288);
    EXPECT_EQ(j["gm"]["write_bytes"], 256u << 20);
}

TEST(Replay, SameConfigurationGivesTheSameBytes) {
    const Result a = pfsim("replay traces/examples/pointer_chase.trace --json");
    const Result b = pfsim("replay traces/examples/pointer_chase.trace --json");
    ASSERT_EQ(a.status, 0);
    EXPECT_EQ(a.out, b.out);
    const Result c = pfsim("replay traces/examples/pointer_chase.trace --json --set l2.hit_latency=60cycles");
    EXPECT_NE(a.out, c.out);  // and the output does depend on the configuration
}

TEST(Replay, VerifyComparesEveryReadWithAFlatMemory) {
    const std::string t = write_trace("verify.trace",
                                      "W 0x1000 4096\nP 0x0 1048576\nR 0x1000 4096\nW 0x1010 7\nR 0x0 65536\n");
    const Result r = pfsim("replay " + t + " --verify --json --set l2.size=64KiB --set l2.ways=4");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(nlohmann::json::parse(r.out)["verify"]["mismatches"], 0);
}

// Without --verify no bytes move; the L2 and GM must time and count every
// access exactly as when they carry the pattern (a path that skipped more than
// the copy would change the counters or the time).
TEST(Replay, BytesMoveOnlyWhenVerifiedAndTimingIsTheSame) {
    const std::string evicting = write_trace(
        "evicting.trace", "W 0x0 1048576\nP 0x100000 262144\nR 0x0 1048576\nW 0x80 100\nR 0x40 512\nR 0x120000 4096\n");
    for (const std::string& path : {std::string("traces/examples/pointer_chase.trace"),
                                    std::string("traces/examples/stream_prefetch.trace"), evicting}) {
        const std::string small_l2 = " --set l2.size=64KiB --set l2.ways=4";
        const Result plain = pfsim("replay " + path + " --json" + small_l2);
        const Result verified = pfsim("replay " + path + " --json --verify" + small_l2);
        ASSERT_EQ(plain.status, 0) << plain.err;
        ASSERT_EQ(verified.status, 0) << verified.err;
        nlohmann::json a = nlohmann::json::parse(plain.out), b = nlohmann::json::parse(verified.out);
        EXPECT_EQ(b["verify"]["mismatches"], 0) << path;
        // Only the replay's ring (one 4 KiB-rounded ring in a 64 KiB page) is written without --verify.
        EXPECT_LE(a["gm"]["touched_bytes"].get<uint64_t>(), 64u << 10) << path;
        if (a["gm"]["write_bytes"].get<uint64_t>() > 0) {
            EXPECT_GT(b["gm"]["touched_bytes"].get<uint64_t>(), a["gm"]["touched_bytes"].get<uint64_t>()) << path;
        }
        for (nlohmann::json* j : {&a, &b}) {
            j->erase("verify");
            j->erase("wall_time_s");
            (*j)["gm"].erase("touched_bytes");
        }
        EXPECT_EQ(a, b) << path;
    }
}

// The trace is read while the replay runs; a pipe reads as the same file does.
TEST(Replay, ATraceFromAPipeIsReadWhole) {
    const std::string text = "W 0x0 1024\nP 0x10000 65536\nR 0x0 4096\nR 0x10000 512";  // no final newline
    const std::string file = write_trace("piped.trace", text);
    const std::string fifo = tmp("trace.fifo");
    std::remove(fifo.c_str());
    ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] { std::ofstream(fifo) << text; });
    const Result piped = pfsim("replay " + fifo + " --json");
    writer.join();
    const Result whole = pfsim("replay " + file + " --json");
    ASSERT_EQ(piped.status, 0) << piped.err;
    ASSERT_EQ(whole.status, 0) << whole.err;
    nlohmann::json a = nlohmann::json::parse(piped.out), b = nlohmann::json::parse(whole.out);
    EXPECT_EQ(a["accesses"], 4);
    a.erase("trace");
    b.erase("trace");
    EXPECT_EQ(a, b);
}

// Addresses are hexadecimal with or without 0x (either case), byte counts decimal.
TEST(Replay, NumbersAreReadInEitherForm) {
    const std::string a = write_trace("forms_a.trace", "R 0xAB00 64\nW\t0Xab00   100 # comment\nR ffffe00 512\n");
    const std::string b = write_trace("forms_b.trace", "R ab00 64\nW AB00 100\nR 0xFFFFE00 512");
    const Result ra = pfsim("replay " + a + " --json"), rb = pfsim("replay " + b + " --json");
    ASSERT_EQ(ra.status, 0) << ra.err;
    ASSERT_EQ(rb.status, 0) << rb.err;
    nlohmann::json ja = nlohmann::json::parse(ra.out), jb = nlohmann::json::parse(rb.out);
    EXPECT_EQ(ja["accesses"], 3);
    EXPECT_EQ(ja["l2"]["hits"], 1);  // the write finds the line the first read brought
    ja.erase("trace");
    jb.erase("trace");
    EXPECT_EQ(ja, jb);
}

// The trace is read in blocks of 1 MiB: lines that straddle blocks, and a
// line longer than a block, read as they do in a short file.
TEST(Replay, LinesAcrossAndLongerThanTheReadBlockAreReadWhole) {
    std::string lines;
    for (int i = 0; lines.size() < (3u << 20); ++i) lines += "R " + std::to_string(i % 4096) + "00 64\n";
    const std::string big = write_trace("blocks.trace", "# " + std::string(3u << 20, 'c') + "\n" + lines + "W 0x40 64");
    const Result r = pfsim("replay " + big + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const size_t accesses = static_cast<size_t>(std::count(lines.begin(), lines.end(), '\n')) + 1;
    EXPECT_EQ(nlohmann::json::parse(r.out)["accesses"], accesses);
    const Result bad = pfsim("replay " + write_trace("blocks_bad.trace", lines + "R 0x0 zz\n") + " --json");
    EXPECT_EQ(bad.status, 2);
    EXPECT_NE(bad.err.find(":" + std::to_string(accesses) + ": expected a decimal byte count"), std::string::npos)
        << bad.err;
}

TEST(Replay, MalformedLinesNameFileAndLine) {
    const std::pair<std::string, std::string> cases[] = {
        {"R 0x0 64\nX 0x0 64\n", ":2: expected R, W or P"},
        {"# ok\nR zz 64\n", ":2: expected a hexadecimal address"},
        {"R 0x0\n", ":1: expected a decimal byte count"},
        {"R 0x0 0\n", ":1: byte count must be greater than zero"},
        {"W 0x0 64 extra\n", ":1: unexpected text"},
        {"R 0x0 64\n\nR 0xffffffffffff 64\n", ":3: range 0xffffffffffff + 64 lies outside"},
        {"R 0x0 -5\n", ":1: expected a decimal byte count"},
        {"R0x0 64\n", ":1: expected a space"},
        {"R 0x10000000000000000 64\n", ":1: expected a hexadecimal address"},  // 2^64
        {"R 0x0x40 64\n", ":1: expected a hexadecimal address"},
        {"R 0xffffffffffffffff 64\n", ":1: range 0xffffffffffffffff + 64 lies outside"},
        {"R 0x0 18446744073709551616\n", ":1: expected a decimal byte count"},  // 2^64
        {"R 0x0 64k\n", ":1: expected a decimal byte count"},
        {"R 0x0 0x40\n", ":1: expected a decimal byte count"},
        {std::string("R 0x0 64\n") + '\0' + "garbage\n", ":2: a NUL byte at column 1"},
        {std::string("R 0x0 64") + '\0' + "garbage\n", ":1: a NUL byte at column 9"},
        {std::string("# ok\n# a") + '\0' + "b\n", ":2: a NUL byte at column 4"},
        {std::string("R 0x0 64 # a") + '\0' + "\n", ":1: a NUL byte at column 13"},
        {std::string("R 0x0 64\n  ") + '\0' + "\nR 0x0 64\n", ":2: a NUL byte at column 3"},
        {std::string("R 0x0 64\n# last line") + '\0', ":2: a NUL byte at column 12"},
    };
    int n = 0;
    for (const auto& [text, message] : cases) {
        const std::string t = write_trace("bad" + std::to_string(n++) + ".trace", text);
        const Result r = pfsim("replay " + t + " --json");
        EXPECT_EQ(r.status, 2) << text;
        EXPECT_NE(r.err.find(t + message), std::string::npos) << text << " -> " << r.err;
        EXPECT_EQ(r.out, "") << text;  // nothing simulated, nothing printed
    }
    const Result missing = pfsim("replay /nonexistent.trace");
    EXPECT_EQ(missing.status, 2);
    EXPECT_NE(missing.err.find("/nonexistent.trace"), std::string::npos);
}

TEST(Cli, BadConfigurationExitsTwoBeforeSimulating) {
    const Result r = pfsim("replay traces/examples/stream_prefetch.trace --set l2.ways=16");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("l2.ways"), std::string::npos);
    EXPECT_EQ(r.out, "");
    const std::string bad = write_trace("bad.toml", "[gm]\nchannels = 0\n");
    const Result f = pfsim("config --config " + bad);
    EXPECT_EQ(f.status, 2);
    EXPECT_NE(f.err.find(bad + ":2: gm.channels"), std::string::npos) << f.err;
    EXPECT_EQ(pfsim("frobnicate").status, 2);
    EXPECT_EQ(pfsim("replay").status, 2);
    EXPECT_EQ(pfsim("config --bogus").status, 2);
}

// Values that used to be accepted and then crashed (an L2 larger than GM: a
// bad_alloc reported on stdout), hung (a 1 Hz clock) or were read as nothing
// (a directory as --config) are refused up front.
TEST(Cli, ValuesThatCannotWorkAreRefusedUpFront) {
    struct Case {
        std::string args, names;
    };
    for (const Case& c : {Case{"run prefetch_demo --set l2.size=16TiB --set l2.ways=1", "l2.size: larger than gm.size"},
                          Case{"run prefetch_demo --set chip.clock=1Hz", "chip.clock: below 1 MHz"},
                          Case{"config --config .", ".: is a directory"},
                          Case{"config --json --markdown", "not both"},
                          Case{"stats --json --markdown", "not both"}}) {
        const Result r = pfsim(c.args);
        EXPECT_EQ(r.status, 2) << c.args;
        EXPECT_EQ(r.out, "") << c.args;
        EXPECT_NE(r.err.find(c.names), std::string::npos) << c.args << ": " << r.err;
    }
    // An L2 as large as GM is allowed (the limit is not off by one).
    EXPECT_EQ(pfsim("config --set gm.size=256MiB --set l2.size=256MiB --set l2.ways=16").status, 0);
}

// A child run's bad input reaches check's user as its message and exit 2 (it
// was "the run printed no summary", exit 1); a repeated --arg is refused; a
// summary that cannot be written (a full disk) is an error, not exit 0.
TEST(Cli, ErrorsAreNeverLost) {
    const Result inject = pfsim("check prefetch_demo --inject bogus");
    EXPECT_EQ(inject.status, 2);
    EXPECT_NE(inject.err.find("prefetch_demo: unknown fault 'bogus' for --inject"), std::string::npos) << inject.err;
    const Result trace = pfsim("check prefetch_demo --trace /nonexistent/dir/p");
    EXPECT_EQ(trace.status, 2);
    EXPECT_NE(trace.err.find("/nonexistent/dir/p.prefetch_demo.off.json: cannot write the trace file"), std::string::npos)
        << trace.err;
    const Result twice = pfsim("run gather_rows --arg rows=4 --arg rows=8");
    EXPECT_EQ(twice.status, 2);
    EXPECT_NE(twice.err.find("--arg rows given twice"), std::string::npos) << twice.err;
    EXPECT_EQ(pfsim("run cases/weight_warm/case.toml --arg rows=512 --arg rows=1024").status, 2);
    for (const char* bad : {"sweep prefetch_demo --grid l2.ways=12 --jobs -1", "calibrate --only hit_latency --jobs 0",
                            "sweep prefetch_demo --grid l2.ways=12 --grid l2.ways=12"}) {
        const Result r = pfsim(bad);
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_TRUE(r.err.find("--jobs takes a whole number") != std::string::npos ||
                    r.err.find("--grid l2.ways given twice") != std::string::npos)
            << bad << ": " << r.err;
    }
    auto to = [](const std::string& where) {
        const std::string err = tmp("full.err");
        const int raw = std::system((std::string(std::getenv("PFSIM")) + " config --json >" + where + " 2>" + err).c_str());
        return Result{WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, "", slurp(err)};
    };
    const Result full = to("/dev/full");
    EXPECT_EQ(full.status, 2);
    EXPECT_NE(full.err.find("cannot write to standard output"), std::string::npos) << full.err;
    EXPECT_EQ(to("/dev/null").status, 0);  // the control: a writable stdout
    // The same for every file a command writes; an unwritable path fails before anything runs.
    for (const char* args : {"run prefetch_demo --trace /dev/full", "check prefetch_demo --junit /dev/full",
                             "sweep prefetch_demo --grid l2.ways=12 --csv /dev/full",
                             "replay traces/examples/stream_prefetch.trace --trace /dev/full"}) {
        const Result r = pfsim(args);
        EXPECT_EQ(r.status, 2) << args;
        EXPECT_NE(r.err.find("/dev/full: cannot write"), std::string::npos) << args << ": " << r.err;
    }
    const Result early = pfsim("sweep prefetch_demo --grid l2.ways=12 --csv /nonexistent/x.csv");
    EXPECT_EQ(early.status, 2);
    EXPECT_NE(early.err.find("/nonexistent/x.csv: cannot write"), std::string::npos) << early.err;
    EXPECT_EQ(early.err.find("points done"), std::string::npos) << early.err;  // nothing ran
}

// A tiny sample interval (1 ps) no longer runs without bound: the sampler
// merges pairs of samples and halves its rate whenever it holds 4096.
TEST(Run, ATinySampleIntervalStaysBounded) {
    const Result r = pfsim("run calib_stream --arg bytes=64KiB --json --set trace.sample_interval=1ps");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["series"]["t_ns"].size(), 200u);
    // The series starts at the first submission: it ends where the last task does.
    const double end = j["tasks"].back()["end_ns"].get<double>();
    EXPECT_NEAR(j["series"]["t_ns"].back().get<double>(), end, 0.02 * end);
}

// Microbenchmarks mark what they time (include/pfsim_timed_pass.h); the run
// reports the time the union of the marked intervals covers.
TEST(Run, MarkedTimedPassesAreReportedAsTheTimeTheyCover) {
    const auto wait = nlohmann::json::parse(pfsim("run prefetch_wait --json").out);  // a case
    EXPECT_EQ(wait["timed_pass"]["bytes"], 1048576);
    EXPECT_GT(wait["timed_pass"]["ns"].get<double>(), 1000.0);
    EXPECT_LT(wait["timed_pass"]["ns"].get<double>(), wait["kernel_time_ns"].get<double>());
    // One core's disjoint passes add up: two cold reads with a prefetch + wait
    // and a warm read between them take twice one, not the span.
    auto cold = [](int pairs) {
        return nlohmann::json::parse(pfsim("run l2_benefit --arg pairs=" + std::to_string(pairs) + " --json").out)["timed_pass"];
    };
    const auto one = cold(1), two = cold(2);
    EXPECT_EQ(two["bytes"], 2 * 16384);
    EXPECT_NEAR(two["ns"].get<double>(), 2 * one["ns"].get<double>(), 0.1 * one["ns"].get<double>());
    // Nothing marked, nothing reported.
    EXPECT_FALSE(nlohmann::json::parse(pfsim("run prefetch_demo --json").out).contains("timed_pass"));
}

TEST(Run, ALongRunSaysOnStderrThatItIsStillGoing) {
    // 200000 prefetch + wait rounds: about 0.6 s simulated, about 3 s of wall time.
    const Result r = pfsim("run prefetch_wait --arg bytes=4KiB --arg rounds=200000 --progress 0.2 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("pfsim: prefetch_wait: still running, "), std::string::npos) << r.err;
    EXPECT_NO_THROW(nlohmann::json::parse(r.out));  // stdout stays the JSON document
    const Result quiet = pfsim("run prefetch_wait --arg bytes=4KiB --arg rounds=20000 --progress 0");
    EXPECT_EQ(quiet.err.find("still running"), std::string::npos) << quiet.err;
    for (const char* bad : {"--progress soon", "--progress -1", "--progress 1e9"}) {
        EXPECT_EQ(pfsim(std::string("run prefetch_demo ") + bad).status, 2) << bad;
    }
}

TEST(RunRequest, TheExecutorsChildPrintsWhatRunAndReplayPrint) {
    // check, sweep and calibrate run each run as `pfsim run-request`, its spec
    // (session/run_spec.h) as JSON on stdin: the same summary, byte for byte.
    const Result direct = pfsim("run prefetch_demo --prefetch off --set l2.replacement=srrip --json");
    ASSERT_EQ(direct.status, 0) << direct.err;
    const std::string spec = write_file(
        "spec.json", R"({"config": {"sets": ["l2.replacement=srrip"]}, "run": {"target": "prefetch_demo", "prefetch": false}})");
    const Result child = pfsim("run-request < " + spec);
    ASSERT_EQ(child.status, 0) << child.err;
    EXPECT_EQ(child.out, direct.out);
    // The control: the spec's prefetch on is another run.
    const Result on = pfsim("run-request < " + write_file("on.json", R"({"run": {"target": "prefetch_demo"}})"));
    EXPECT_NE(on.out, direct.out);

    const Result replay = pfsim("replay traces/examples/stream_prefetch.trace --json");
    const Result replayed =
        pfsim("run-request < " + write_file("replay.json", R"({"replay": {"file": "traces/examples/stream_prefetch.trace"}})"));
    ASSERT_EQ(replayed.status, 0) << replayed.err;
    EXPECT_EQ(replayed.out, replay.out);
}

TEST(RunRequest, ABadSpecIsBadInputNamingWhatIsWrong) {
    const std::pair<const char*, const char*> bad[] = {
        {"{", "stdin holds no JSON document"},
        {R"({"run": {"target": "prefetch_demo", "prefetchh": false}})", "run.prefetchh: unknown field"},
        {R"({"run": {"prefetch": false}})", "run.target: missing"},
        {R"({"run": {"target": "prefetch_demo", "prefetch": "yes"}})",
         "run spec: run.prefetch: expected a boolean, got a string"},
        {R"({"run": {"target": "prefetch_demo"}, "config": {"sets": ["l2.nope=1"]}})", "l2.nope"},
        {R"({"run": {"target": "no_such_case"}})", "no_such_case"},
    };
    for (const auto& [text, expected] : bad) {
        const Result r = pfsim("run-request < " + write_file("bad.json", text));
        EXPECT_EQ(r.status, 2) << text << ": " << r.err;
        EXPECT_NE(r.err.find(expected), std::string::npos) << text << ": " << r.err;
        EXPECT_EQ(r.out, "") << text;
    }
    EXPECT_EQ(pfsim("run-request extra < /dev/null").status, 2);
}

TEST(Check, ARunThatTakesLongSaysSoOnStderrWithItsArguments) {
    // check's children keep their stderr: check itself reports each one still running.
    const Result r = pfsim("check cases/vector_chain/case.toml --progress 0.001 --json");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_NE(r.err.find("pfsim: still running after "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("s: run "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("vector_chain/case.toml --prefetch o"), std::string::npos) << r.err;
    EXPECT_NO_THROW(nlohmann::json::parse(r.out));
    const Result quiet = pfsim("check cases/vector_chain/case.toml --progress 0");
    EXPECT_EQ(quiet.err.find("still running"), std::string::npos) << quiet.err;
    EXPECT_EQ(pfsim("check cases/vector_chain/case.toml --progress -1").status, 2);
    EXPECT_EQ(pfsim("sweep cases/vector_chain/case.toml --grid arg.n=4096 --progress soon").status, 2);
}

TEST(Cli, ConfigPrintsTheResolvedConfiguration) {
    const Result r = pfsim("config --json --set l2.ways=24");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["l2.ways"], 24);
    EXPECT_EQ(j["l2.line_bytes"], 512);
    EXPECT_EQ(j["l2.index"], "modulo");
    const Result text = pfsim("config");
    EXPECT_NE(text.out.find("[l2]"), std::string::npos);
    EXPECT_NE(text.out.find("ways                       = 12"), std::string::npos) << text.out;
}

TEST(Check, EveryKernelIsEquivalentAndMeetsItsExpectedGain) {
    const std::string junit = tmp("check.xml");
    const Result r = pfsim("check --json --strict-gain --junit " + junit);
    ASSERT_EQ(r.status, 0) << r.out << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["schema"], "pfsim.check/1");
    ASSERT_GE(j["kernels"].size(), 6u);
    for (const auto& k : j["kernels"]) {
        EXPECT_TRUE(k["equal"].get<bool>()) << k.dump();
        EXPECT_TRUE(k["gain_met"].get<bool>()) << k.dump();
        EXPECT_EQ(k["verdict"], "pass");
        if (k["name"] == "no_gain") {
            EXPECT_LE(k["gain_pct"].get<double>(), 0.5);  // the model invents no gains
        }
        if (k["name"] == "matmul_tiled") {
            EXPECT_GT(k["gain_pct"].get<double>(), 0.0);
        }
    }
    // The shipped cases (cases/) are part of the plain check.
    std::set<std::string> names;
    for (const auto& k : j["kernels"]) names.insert(k["name"].get<std::string>());
    for (const char* n : {"prefetch_demo", "vector_chain", "weight_warm", "weight_warm_waited", "weight_warm_oversize",
                          "gemv_stream", "matmul_tiled", "gather_rows", "no_gain", "prefetch_wait"}) {
        EXPECT_TRUE(names.count(n)) << n;
    }
    EXPECT_FALSE(names.count("l2_benefit"));  // `check = false`: a calibration instrument, run only when named
    const std::string xml = slurp(junit);
    EXPECT_NE(xml.find("<testsuite name=\"pfsim check\" tests=\"" + std::to_string(j["kernels"].size()) +
                       "\" failures=\"0\">"),
              std::string::npos)
        << xml;
}

TEST(Check, InjectedFaultsMakeItFail) {
    const Result corrupt = pfsim("check prefetch_demo --json --inject prefetch-corrupt");
    EXPECT_EQ(corrupt.status, 1);
    const auto c = nlohmann::json::parse(corrupt.out)["kernels"][0];
    EXPECT_EQ(c["verdict"], "fail");
    EXPECT_NE(c["reason"].get<std::string>().find("differs between prefetch off and on"), std::string::npos);
    const Result skip = pfsim("check prefetch_demo --json --inject skip-wait");
    EXPECT_EQ(skip.status, 1);
    const auto s = nlohmann::json::parse(skip.out)["kernels"][0];
    EXPECT_NE(s["reason"].get<std::string>().find("protocol violation: wait returned true"), std::string::npos)
        << s.dump();
}

TEST(Run, ReportsTimeCountersAndOutputHashes) {
    const Result a = pfsim("run prefetch_demo --json");
    ASSERT_EQ(a.status, 0) << a.err;
    const auto j = nlohmann::json::parse(a.out);
    EXPECT_GT(j["kernel_time_ns"].get<double>(), 0.0);
    EXPECT_GT(j["cycles"].get<uint64_t>(), 0u);
    EXPECT_EQ(j["l2"]["prefetch_lines"], 1);
    EXPECT_EQ(j["sdma"]["prefetch_requests"], 1);
    EXPECT_EQ(j["sdma"]["copy_requests"], 1);
    EXPECT_EQ(j["outputs"][0]["sha256"].get<std::string>().size(), 64u);
    EXPECT_TRUE(j["reference_equal"].get<bool>());
    EXPECT_EQ(j["warmup"].get<std::string>().rfind("48/48 channels warmed in 4.4", 0), 0u) << j["warmup"];  // about 4.4 ms (MEAS)
    EXPECT_EQ(pfsim("run prefetch_demo --json").out, a.out);  // deterministic
    const auto off = nlohmann::json::parse(pfsim("run prefetch_demo --json --prefetch off").out);
    EXPECT_EQ(off["outputs"][0]["sha256"], j["outputs"][0]["sha256"]);
    EXPECT_EQ(off["sdma"]["requests"], 0);
}

TEST(Run, RuntimeErrorsCarryTheDocumentedMessages) {
    const Result no_sdma = pfsim("run prefetch_demo --no-sdma");
    EXPECT_EQ(no_sdma.status, 1);
    EXPECT_NE(no_sdma.err.find("ChipWorker was created without enable_sdma=True"), std::string::npos) << no_sdma.err;
    const Result none = pfsim("run prefetch_demo --set sdma.provider=none");
    EXPECT_EQ(none.status, 1);
    EXPECT_NE(none.err.find("async-DMA workspace provisioning (mask=1) failed with code -1"), std::string::npos)
        << none.err;
}

TEST(Kernels, ListsEveryKernelAndCaseWithItsExpectedGain) {
    const Result r = pfsim("kernels");
    ASSERT_EQ(r.status, 0) << r.err;
    // Both bounds, the lower one too (#14 item 9): the bands tools/gain_bands.py derives (#50).
    EXPECT_NE(r.out.find("expected gain -5961..-1863 %"), std::string::npos) << r.out;  // gemv_stream
    EXPECT_NE(r.out.find("expected gain -190..36 %"), std::string::npos) << r.out;      // gather_rows
    EXPECT_NE(r.out.find("expected gain 2..48 %"), std::string::npos) << r.out;         // weight_warm, a case
    const auto j = nlohmann::json::parse(pfsim("kernels --json").out);
    bool gemv = false;
    for (const auto& k : j) {
        if (k["name"] == "gemv_stream") gemv = k["expected_gain_pct"] == nlohmann::json::array({-5961, -1863});
    }
    EXPECT_TRUE(gemv);
    // A user's case may leave a side unbounded (+-1e9): the table leaves it empty.
    std::string text = slurp("cases/vector_chain/case.toml");
    const std::string kernels = std::filesystem::absolute("cases/vector_chain/kernels/").string();
    for (size_t at; (at = text.find("\"kernels/")) != std::string::npos;) text.replace(at, 9, "\"" + kernels);
    text.replace(text.find("expected_gain = [-1, 1]"), 23, "expected_gain = [-1000000000, 1]");
    const Result open = pfsim("check " + write_file("open.toml", text));
    EXPECT_EQ(open.status, 0) << open.out << open.err;
    EXPECT_NE(open.out.find(" ..1 "), std::string::npos) << open.out;
}

TEST(Run, BadKernelInputExitsTwo) {
    const Result unknown = pfsim("run nosuch");
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(unknown.err.find("unknown kernel 'nosuch' (shipped cases: "), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("calib_stream"), std::string::npos) << unknown.err;  // the instruments too
    const Result param = pfsim("run prefetch_wait --arg bogus=1");  // a shipped case's params
    EXPECT_EQ(param.status, 2);
    EXPECT_NE(param.err.find("prefetch_wait/case.toml has no parameter 'bogus' (params: bytes, cores, lead, part, rounds, scopes, wait)"),
              std::string::npos)
        << param.err;
    const Result size = pfsim("run prefetch_wait --arg bytes=4KiBs");
    EXPECT_EQ(size.status, 2);
    EXPECT_NE(size.err.find("--arg bytes=4KiBs: the value is not a number"), std::string::npos) << size.err;
    const Result value = pfsim("run gemv_stream --arg rows=100");
    EXPECT_EQ(value.status, 2);
    // A shipped case's golden refuses a parameter it cannot serve, before the run.
    EXPECT_NE(value.err.find("gemv_stream/golden.cpp: compute_golden: --arg rows=100 must be a positive multiple of 192"),
              std::string::npos)
        << value.err;
    EXPECT_TRUE(value.out.empty()) << value.out;
    EXPECT_EQ(pfsim("run prefetch_demo --prefetch maybe").status, 2);
    EXPECT_EQ(pfsim("run prefetch_demo --inject gremlins").status, 2);
    EXPECT_EQ(pfsim("check nosuch").status, 2);
}

TEST(Diff, ComparesRunsAndGatesOnRegressions) {
    const std::string off = tmp("off.json"), on = tmp("on.json");
    std::ofstream(off) << pfsim("run matmul_tiled --json --prefetch off").out;
    std::ofstream(on) << pfsim("run matmul_tiled --json").out;
    const Result r = pfsim("diff " + off + " " + on + " --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    ASSERT_EQ(j["kernels"].size(), 1u);
    const auto& k = j["kernels"][0];
    EXPECT_LT(k["delta_pct"].get<double>(), -20.0);  // prefetch made it faster
    EXPECT_GT(k["lanes"]["prefetch_wait_ns"]["b"].get<double>(), 0.0);
    EXPECT_LT(k["lanes"]["l2_stall_ns"]["delta"].get<double>(), 0.0);
    EXPECT_GT(k["counters"]["l2.hits"]["delta"].get<double>(), 0.0);
    // B slower than A by more than the limit: a CI gate fails.
    const Result gate = pfsim("diff " + on + " " + off + " --max-regression 10");
    EXPECT_EQ(gate.status, 1);
    EXPECT_NE(gate.err.find("regression: matmul_tiled"), std::string::npos);
    EXPECT_EQ(pfsim("diff " + on + " " + off + " --max-regression 100").status, 0);
    EXPECT_EQ(pfsim("diff " + on + " " + on + " --max-regression 0").status, 0);
    // What the gate used to let through: a zero time on either side, a kernel
    // B lacks, a limit that is not a number.
    nlohmann::json zero = nlohmann::json::parse(slurp(on));
    zero["kernel_time_ns"] = 0;
    const std::string z = tmp("zero.json");
    std::ofstream(z) << zero.dump();
    const Result from_zero = pfsim("diff " + z + " " + on + " --max-regression 5");
    EXPECT_EQ(from_zero.status, 1);
    EXPECT_NE(from_zero.err.find("has no time in A"), std::string::npos) << from_zero.err;
    const Result to_zero = pfsim("diff " + on + " " + z + " --max-regression 5");
    EXPECT_EQ(to_zero.status, 1);
    EXPECT_NE(to_zero.err.find("has no time in B"), std::string::npos) << to_zero.err;
    const std::string one = pfsim::test::write_file("one.csv", "Op Name,Task Duration(us),Block Dim\nmatmul_tiled,51.25,2\n");
    const std::string two = pfsim::test::write_file("two.csv", "Op Name,Task Duration(us),Block Dim\nmatmul_tiled,51.25,2\nprefetch_demo,4.1,1\n");
    const Result missing = pfsim("diff " + two + " " + one + " --max-regression 5");
    EXPECT_EQ(missing.status, 1) << missing.err;
    EXPECT_NE(missing.err.find("prefetch_demo is missing from B"), std::string::npos) << missing.err;
    EXPECT_EQ(pfsim("diff " + two + " " + two + " --max-regression 5").status, 0);
    EXPECT_EQ(pfsim("diff " + on + " " + on + " --max-regression nan").status, 2);
}

TEST(Diff, ComparesChecksTracesAndOnboardProfiles) {
    const std::string check = tmp("check.json");
    std::ofstream(check) << pfsim("check prefetch_demo matmul_tiled --json").out;
    const Result self = pfsim("diff " + check + " " + check + " --json");
    ASSERT_EQ(self.status, 0) << self.err;
    EXPECT_EQ(nlohmann::json::parse(self.out)["kernels"].size(), 4u);  // each kernel off and on
    const std::string sim = tmp("sim.json");
    std::ofstream(sim) << pfsim("run matmul_tiled --json").out;
    const Result onboard = pfsim("diff " + sim + " tests/fixtures/onboard/op_summary.csv --json");
    ASSERT_EQ(onboard.status, 0) << onboard.err;
    const auto k = nlohmann::json::parse(onboard.out)["kernels"][0];
    EXPECT_EQ(k["name_b"], "matmul_tiled");
    EXPECT_DOUBLE_EQ(k["time_b_ns"].get<double>(), 51250.0);
    EXPECT_DOUBLE_EQ(k["lanes"]["cube_ns"]["b"].get<double>(), 17800.0 * 2);  // per-core average x Block Dim
    const Result timeline = pfsim("diff tests/fixtures/onboard/trace_view.json tests/fixtures/onboard/op_summary.csv --json");
    ASSERT_EQ(timeline.status, 0) << timeline.err;
    EXPECT_EQ(nlohmann::json::parse(timeline.out)["kernels"].size(), 2u);
    const std::string a = tmp("a.trace.json"), b = tmp("b.trace.json");
    pfsim("run gather_rows --prefetch off --trace " + a);
    pfsim("run gather_rows --trace " + b);
    const Result traces = pfsim("diff " + a + " " + b + " --json");
    ASSERT_EQ(traces.status, 0) << traces.err;
    EXPECT_GT(nlohmann::json::parse(traces.out)["kernels"][0]["lanes"]["prefetch_wait_ns"]["b"].get<double>(), 0.0);
}

TEST(Diff, BadInputNamesTheFileAndPosition) {
    const std::string good = tmp("good.json");
    const std::string text = pfsim("run prefetch_demo --json").out;
    std::ofstream(good) << text;
    const std::string truncated = write_trace("truncated.json", text.substr(0, text.size() / 2));
    const std::string garbage = write_trace("garbage.json", "{\"schema\": \"pfsim.summary/1\", oops}");
    const std::string schema = write_trace("schema.json", "{\"schema\": \"pfsim.summary/9\"}");
    const std::string unknown = write_trace("unknown.json", "{\"hello\": 1}");
    const std::string no_column = write_trace("bad1.csv", "Op Name,Block Dim\nx,1\n");
    const std::string bad_number = write_trace("bad2.csv", "Op Name,Task Duration(us)\na,1.5\nb,abc\n");
    const std::string negative = write_trace("bad3.csv", "Op Name,Task Duration(us)\na,1.5\nb,-2\n");
    // Fields of the wrong type or beyond double's range (#14 item 1).
    nlohmann::json doc = nlohmann::json::parse(text);
    doc["kernel_time_ns"] = "abc";
    const std::string a_string = write_trace("time_string.json", doc.dump());
    doc["kernel_time_ns"] = nullptr;
    const std::string a_null = write_trace("time_null.json", doc.dump());
    doc["kernel_time_ns"] = 12345.5;
    std::string huge_text = doc.dump();
    huge_text.replace(huge_text.find("12345.5"), 7, "1e400");
    const std::string huge = write_trace("time_huge.json", huge_text);
    const std::string ts_string = write_trace(
        "ts_string.json", R"({"traceEvents": [{"ph": "X", "pid": 1, "tid": 1, "ts": 0, "dur": 1, "name": "a"},
                                              {"ph": "X", "pid": 1, "tid": 1, "ts": "abc", "dur": 1, "name": "b"}]})");
    // An integer field beyond its type: a cast would be undefined (fuzz/regressions/document_fuzz).
    const std::string pid_huge = write_trace(
        "pid_huge.json", R"({"traceEvents": [{"ph": "M", "name": "process_name", "pid": 1e300, "args": {"name": "x"}}]})");
    const std::pair<std::string, std::string> cases[] = {
        {a_string, a_string + ": field kernel_time_ns: expected a number, got string"},
        {a_null, a_null + ": field kernel_time_ns: expected a number, got null"},
        {huge, huge + ": not valid JSON"},
        {ts_string, ts_string + ": traceEvents[1]: a field has the wrong type"},
        {pid_huge, pid_huge + ": traceEvents[0]: a field has the wrong type"},
        {truncated, truncated + ": byte "},
        {garbage, garbage + ": byte "},
        {schema, schema + ": field schema: 'pfsim.summary/9' is not supported"},
        {unknown, unknown + ": not a pfsim summary"},
        {no_column, no_column + ": line 1: no column 'Task Duration(us)'"},
        {bad_number, bad_number + ": line 3: Task Duration(us): 'abc' is not a number"},
        {negative, negative + ": line 3: Task Duration(us): '-2' is not a non-negative number"},
        {"/nonexistent.json", "/nonexistent.json: cannot read"},
    };
    for (const auto& [file, message] : cases) {
        const Result r = pfsim("diff " + good + " " + file);
        EXPECT_EQ(r.status, 2) << file;
        EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << file;
    }
    EXPECT_EQ(pfsim("diff " + good).status, 2);
    EXPECT_EQ(pfsim("diff " + good + " " + good + " --max-regression fast").status, 2);
    // report reads more of a summary than diff does (the series, the insight blocks).
    const std::string page = tmp("bad.html");
    for (const std::string& file : {a_string, ts_string}) {
        const Result r = pfsim("report " + file + " --html " + page);
        EXPECT_EQ(r.status, 2) << file;
        EXPECT_NE(r.err.find(file + ": "), std::string::npos) << r.err;
    }
    nlohmann::json series = nlohmann::json::parse(text);
    series["series"] = {{"t_ns", "abc"}};
    const std::string bad_series = write_trace("series.json", series.dump());
    nlohmann::json sanitizer = nlohmann::json::parse(text);
    sanitizer["sanitizer"] = {{"errors", 1e300}};
    const std::string bad_count = write_trace("sanitizer_count.json", sanitizer.dump());
    for (const std::string& file : {bad_series, bad_count}) {
        const Result r = pfsim("report " + file + " --html " + page);
        EXPECT_EQ(r.status, 2) << file;
        EXPECT_NE(r.err.find(file + ": a field has the wrong type"), std::string::npos) << r.err;
        EXPECT_EQ(r.out, "") << file;
    }
}

TEST(Sweep, RunsTheGridAndKeepsFailingPointsInTheCsv) {
    const std::string csv = tmp("sweep.csv");
    const Result r = pfsim("sweep prefetch_demo --grid sdma.provider=model,none --grid arg.unused=1 --jobs 2");
    EXPECT_EQ(r.status, 2);  // prefetch_demo has no parameter 'unused': rejected before running
    EXPECT_NE(r.err.find("prefetch_demo/case.toml has no parameter 'unused'"), std::string::npos) << r.err;
    const Result s = pfsim("sweep prefetch_wait --grid sdma.provider=model,none --grid arg.bytes=4KiB,1MiB --jobs 2 --csv " + csv);
    EXPECT_EQ(s.status, 1);  // the provider-less points fail...
    const std::string text = slurp(csv);
    std::istringstream lines(text);
    std::string header, line;
    std::getline(lines, header);
    EXPECT_EQ(header, "sdma.provider,arg.bytes,time_off_ns,time_on_ns,gain_pct,l2_hit_rate_off,l2_hit_rate_on,error");
    std::vector<std::string> rows;
    while (std::getline(lines, line)) rows.push_back(line);
    ASSERT_EQ(rows.size(), 4u);  // ...and the others still ran
    EXPECT_EQ(rows[0].rfind("model,4KiB,", 0), 0u);
    EXPECT_EQ(rows[0].back(), ',');  // no error
    EXPECT_NE(rows[2].find("none,4KiB,,,,,,prefetch off: async-DMA workspace provisioning (mask=1) failed with code -1"),
              std::string::npos) << rows[2];
    EXPECT_NE(s.err.find("sweep prefetch_wait: 4/4 points done"), std::string::npos);  // plain progress off a terminal
    EXPECT_EQ(pfsim("sweep prefetch_wait --grid l2.ways=16").status, 2);
    EXPECT_EQ(pfsim("sweep prefetch_wait --grid nonsense").status, 2);
    EXPECT_EQ(pfsim("sweep prefetch_wait --grid arg.bytes=1MiB --jobs 0").status, 2);
}

// --out DIR keeps each point as it ends; the same command again runs only the
// missing ones; --collect assembles the same CSV. (Slurm: tests/slurm.)
TEST(Sweep, AFolderKeepsPointsResumesAndCollects) {
    const std::string grid = "sweep prefetch_wait --grid arg.bytes=4KiB,64KiB,1MiB --jobs 2";
    const std::string dir = tmp("sweep-dir");
    std::filesystem::remove_all(dir);
    const Result plain = pfsim(grid);
    ASSERT_EQ(plain.status, 0) << plain.err;
    const Result kept = pfsim(grid + " --out " + dir);
    ASSERT_EQ(kept.status, 0) << kept.err;
    EXPECT_EQ(kept.out, plain.out);
    ASSERT_TRUE(std::filesystem::exists(dir + "/points/000002.json"));

    std::filesystem::remove(dir + "/points/000001.json");
    const Result partial = pfsim("sweep --collect " + dir);
    EXPECT_EQ(partial.status, 1);  // a point missing: listed, its row says so
    EXPECT_NE(partial.err.find("points not run: arg.bytes=64KiB"), std::string::npos) << partial.err;
    EXPECT_NE(partial.out.find("\n64KiB,,,,,,not run\n"), std::string::npos) << partial.out;
    const auto before = std::filesystem::last_write_time(dir + "/points/000000.json");
    const Result resumed = pfsim(grid + " --out " + dir);
    EXPECT_EQ(resumed.status, 0) << resumed.err;
    EXPECT_EQ(resumed.out, plain.out);
    EXPECT_NE(resumed.err.find("1/1 points done"), std::string::npos) << resumed.err;  // only the missing point ran
    EXPECT_EQ(std::filesystem::last_write_time(dir + "/points/000000.json"), before);
    EXPECT_EQ(pfsim("sweep --collect " + dir).out, plain.out);

    // Bad input: exit 2 with the reason.
    const Result other = pfsim("sweep prefetch_wait --grid arg.bytes=8KiB --out " + dir);
    EXPECT_EQ(other.status, 2);
    EXPECT_NE(other.err.find(dir + " holds another batch"), std::string::npos) << other.err;
    std::ofstream(dir + "/points/000001.json") << "{\"half\":";
    const Result torn = pfsim("sweep --collect " + dir);
    EXPECT_EQ(torn.status, 2);
    EXPECT_NE(torn.err.find(dir + "/points/000001.json: not a result of this batch"), std::string::npos) << torn.err;
    EXPECT_EQ(torn.out, "");
    const Result none = pfsim("sweep --collect " + tmp(""));
    EXPECT_EQ(none.status, 2);
    EXPECT_NE(none.err.find("holds no batch (no plan.json)"), std::string::npos) << none.err;
    for (const char* bad : {"sweep prefetch_wait --grid arg.bytes=4KiB --wait",
                            "sweep prefetch_wait --grid arg.bytes=4KiB --partition debug",
                            "sweep prefetch_wait --grid arg.bytes=4KiB --chunk 2",
                            "sweep prefetch_wait --grid arg.bytes=4KiB --slurm",
                            "sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out /tmp/x --jobs 2",
                            "sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out /tmp/x --slurm-opt=--array=1-3",
                            "sweep prefetch_wait --grid arg.bytes=4KiB --slurm --out /tmp/x --slurm-opt=time",
                            "sweep prefetch_wait --collect /tmp", "batch-task /tmp 0"}) {
        const Result r = pfsim(bad);
        EXPECT_EQ(r.status, 2) << bad;
        EXPECT_NE(r.err.find("pfsim: "), std::string::npos) << bad;
    }
}

TEST(Check, AFolderKeepsEachKernelAndCollects) {
    const std::string dir = tmp("check-dir");
    std::filesystem::remove_all(dir);
    const Result plain = pfsim("check prefetch_demo no_gain");
    ASSERT_EQ(plain.status, 0) << plain.err;
    const Result kept = pfsim("check prefetch_demo no_gain --out " + dir);
    EXPECT_EQ(kept.out, plain.out);
    std::filesystem::remove(dir + "/points/000000.json");
    const Result partial = pfsim("check --collect " + dir);
    EXPECT_EQ(partial.status, 1);
    EXPECT_NE(partial.out.find("FAIL: not run (no result in the batch folder)"), std::string::npos) << partial.out;
    EXPECT_EQ(pfsim("check prefetch_demo no_gain --out " + dir).out, plain.out);  // runs prefetch_demo again
    EXPECT_EQ(pfsim("check --collect " + dir).out, plain.out);
    for (const char* bad : {"check --collect DIR prefetch_demo", "check --collect DIR --set l2.ways=8",
                            "check --collect DIR --inject drop-wait", "check prefetch_demo --wait",
                            "check prefetch_demo --advise --slurm --out /tmp/x"}) {
        std::string command = bad;
        command.replace(command.find("DIR") == std::string::npos ? command.size() : command.find("DIR"),
                        command.find("DIR") == std::string::npos ? 0 : 3, dir);
        const Result r = pfsim(command);
        EXPECT_EQ(r.status, 2) << command;
        EXPECT_NE(r.err.find("pfsim: "), std::string::npos) << command;
    }
    const Result sweep_dir = pfsim("sweep --collect " + dir);
    EXPECT_EQ(sweep_dir.status, 2);
    EXPECT_NE(sweep_dir.err.find("holds a check, not a sweep"), std::string::npos) << sweep_dir.err;
}

TEST(Calibrate, EveryFigureInToleranceAndAFigureThatIsNot) {
    const Result ok = pfsim("calibrate --json");
    ASSERT_EQ(ok.status, 0) << ok.out << ok.err;
    const auto j = nlohmann::json::parse(ok.out);
    EXPECT_EQ(j["figures"].size(), 36u);
    // Every figure in tolerance but the known gaps (docs/calibration.md), which
    // are reported as such and do not fail the run.
    const std::set<std::string> gaps = {"warm_issue_cost", "l2_bypass_gain", "l2_bypass_mte2", "setup_rounds_after_5"};
    for (const auto& f : j["figures"]) {
        const bool gap = gaps.count(f["id"].get<std::string>()) > 0;
        EXPECT_EQ(f["pass"].get<bool>(), !gap) << f.dump();
        EXPECT_EQ(f["known_gap"].get<std::string>().empty(), !gap) << f.dump();
    }
    EXPECT_EQ(j["known_gaps"], 4);
    // Negative control for the two-stream figure: without the channel switch, a
    // second stream adds its bandwidth instead of halving the total.
    const Result unswitched = pfsim("calibrate --only sdma_two_streams,sdma_second_stream --set sdma.channel_switch_cost=0ns");
    EXPECT_EQ(unswitched.status, 1) << unswitched.out;
    // Negative control for the 16-scope issue figure: with posted doorbells the
    // publications overlap and each core's two posts take about 2.6 us, not 24.
    const Result posted = pfsim("calibrate --only warm_issue_64m_32m --set sdma.doorbell_write=posted");
    EXPECT_EQ(posted.status, 1) << posted.out;
    // Negative control for the two warm scopes: without the channel set-up both
    // stream from the start, and the 33.6 MB scope is too fast (76 GB/s, not 52).
    const Result unset = pfsim("calibrate --only two_scopes_second --set sdma.channel_setup_cost=0us");
    EXPECT_EQ(unset.status, 1) << unset.out;
    // Negative control for the resident warm: resident lines moved at the
    // engine's data rate take as long as a cold warm (about 360 us, not 35).
    const Result unchecked = pfsim("calibrate --only resident_warm --set sdma.resident_check_bandwidth=280GB/s");
    EXPECT_EQ(unchecked.status, 1) << unchecked.out;
    // Negative control for the 16 KiB figure: with the old 64-cycle transfer set-up
    // a cold read is about 5 x slower, not 2.26 x.
    const Result quick = pfsim("calibrate --only l2_benefit_16k --set core.transfer_setup=64cycles");
    EXPECT_EQ(quick.status, 1) << quick.out;
    // Negative control for the same-address figure: without the same-line rule,
    // 48 cores on one region are not slower than on their own.
    const Result free = pfsim("calibrate --only same_address --set l2.same_line_interval=0ns");
    EXPECT_EQ(free.status, 1) << free.out;
    // Negative control: a slower engine no longer reproduces the measured 280 GB/s.
    const Result slow = pfsim("calibrate --only sdma_peak --set sdma.channel_bandwidth=200GB/s --set sdma.bandwidth=200GB/s");
    EXPECT_EQ(slow.status, 1);
    EXPECT_NE(slow.out.find("OUT OF TOLERANCE"), std::string::npos) << slow.out;
    EXPECT_EQ(pfsim("calibrate --only nosuch").status, 2);
    const std::string page = tmp("calibration.html");
    ASSERT_EQ(pfsim("calibrate --only hit_latency --html " + page).status, 0);
    const std::string html = slurp(page);
    EXPECT_NE(html.find("data-plot=\"gm_bandwidth\""), std::string::npos);
    EXPECT_NE(html.find("data-plot=\"working_set\""), std::string::npos);
}

// A user's own table (--table): the same runs, expressions, verdicts and
// known gaps as the built-in one (calibration/figures.toml).
TEST(Calibrate, AUsersTableIsMeasuredAndJudgedLikeTheBuiltInOne) {
    auto table = [](const std::string& name, const std::string& bounds, const std::string& more) {
        return write_file(name, "[[figure]]\nid = \"hit\"\nwhat = \"one line read again\"\nunit = \"ns\"\n"
                                "source = \"mine\"\n" + bounds + "\nruns = [{ trace = \"same_line\" }]\n"
                                "value = \"run[0].sim_time_ns / 2000\"\n" + more);
    };
    const Result ok = pfsim("calibrate --table " + table("ok.toml", "low = 'ps(\"l2.hit_latency\") / 1e3'\nhigh = 1e9", ""));
    EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
    EXPECT_NE(ok.out.find("1 figures, 0 out of tolerance"), std::string::npos) << ok.out;
    // The control: bounds the model does not meet fail the run ...
    const Result out = pfsim("calibrate --table " + table("out.toml", "low = 1\nhigh = 2", ""));
    EXPECT_EQ(out.status, 1) << out.out << out.err;
    EXPECT_NE(out.out.find("OUT OF TOLERANCE"), std::string::npos) << out.out;
    // ... unless the figure is a known gap, reported as one.
    const Result gap = pfsim("calibrate --json --table " + table("gap.toml", "low = 1\nhigh = 2", "known_gap = \"why\"\n"));
    EXPECT_EQ(gap.status, 0) << gap.out << gap.err;
    const auto j = nlohmann::json::parse(gap.out);
    EXPECT_EQ(j["figures"][0]["known_gap"], "why");
    EXPECT_EQ(j["known_gaps"], 1);
    // Bad tables: exit 2 naming the file, the line and the key; the run names its trace.
    const std::string bad = table("bad.toml", "low = 1\nhigh = 2\ncolour = 3", "");
    const Result unknown = pfsim("calibrate --table " + bad);
    EXPECT_EQ(unknown.status, 2);
    EXPECT_NE(unknown.err.find(bad + ":8: figure: unknown key 'colour'"), std::string::npos) << unknown.err;
    const Result key = pfsim("calibrate --table " + table("key.toml", "low = 'ps(\"l2.nosuch\")'\nhigh = 2", ""));
    EXPECT_EQ(key.status, 2);
    EXPECT_NE(key.err.find("figure hit: its bounds: "), std::string::npos) << key.err;
    EXPECT_NE(key.err.find("'l2.nosuch' is not a parameter of kind time"), std::string::npos) << key.err;
    const std::string other = table("trace.toml", "low = 1\nhigh = 2", "");
    std::string text = slurp(other);
    text.replace(text.find("same_line"), 9, "zigzag");
    const Result trace = pfsim("calibrate --table " + write_file("trace.toml", text));
    EXPECT_EQ(trace.status, 2);
    EXPECT_NE(trace.err.find("trace 'zigzag': unknown"), std::string::npos) << trace.err;
    EXPECT_EQ(pfsim("calibrate --table " + tmp("nosuch.toml")).status, 2);
}

// The pointer chase is built in: calibrate no longer needs the repository as
// its working directory (it failed miss_latency elsewhere).
// check --uncertainty: each case's gain at the ends of the preset's ranges, one
// parameter at a time; the range, the parameter moving it most, its sign. The
// gain at each end is the plain check's with that --set.
TEST(Check, UncertaintyGivesEachGainAsARangeAndTheParameterMovingItMost) {
    const Result r = pfsim("check prefetch_demo --uncertainty --vary core.scalar_op,sdma.doorbell_latency --json");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    EXPECT_EQ(j["varied"], nlohmann::json::array({"core.scalar_op", "sdma.doorbell_latency"}));
    ASSERT_EQ(j["cases"].size(), 1u);
    const auto c = j["cases"][0];
    const double low = c["low_pct"], high = c["high_pct"], gain = c["gain_pct"];
    EXPECT_LE(low, gain);
    EXPECT_GE(high, gain);
    EXPECT_LT(low, high);  // the doorbell's latency moves this prefetch's cost
    EXPECT_EQ(c["sign_holds"], (low > 0) == (high > 0));
    const auto at_high = nlohmann::json::parse(pfsim("check prefetch_demo --json --set sdma.doorbell_latency=0.6us").out);
    EXPECT_EQ(c["per_key"]["sdma.doorbell_latency"][1], at_high["kernels"][0]["gain_pct"]);
    const double moved_by = std::max(std::fabs(c["per_key"][c["most_sensitive"].get<std::string>()][0].get<double>() - gain),
                                     std::fabs(c["per_key"][c["most_sensitive"].get<std::string>()][1].get<double>() - gain));
    for (const auto& [key, ends] : c["per_key"].items()) {
        EXPECT_LE(std::max(std::fabs(ends[0].get<double>() - gain), std::fabs(ends[1].get<double>() - gain)), moved_by) << key;
    }
    // The combinations: each key at the end that moved the gain that way, the
    // gain there a plain check's with those --sets, and (here, where both keys
    // move the prefetch's cost) further out than either key alone.
    const auto lowest = c["combined"]["lowest"], highest = c["combined"]["highest"];
    EXPECT_EQ(lowest["sets"], nlohmann::json::array({"core.scalar_op=1 cycles", "sdma.doorbell_latency=0.6 us"}));
    EXPECT_EQ(highest["sets"], nlohmann::json::array({"core.scalar_op=4 cycles", "sdma.doorbell_latency=0.4 us"}));
    const auto at_lowest = nlohmann::json::parse(
        pfsim("check prefetch_demo --json --set 'core.scalar_op=1 cycles' --set 'sdma.doorbell_latency=0.6 us'").out);
    EXPECT_EQ(lowest["gain_pct"], at_lowest["kernels"][0]["gain_pct"]);
    EXPECT_EQ(low, lowest["gain_pct"].get<double>());
    EXPECT_EQ(high, highest["gain_pct"].get<double>());
    for (const auto& [key, ends] : c["per_key"].items()) {
        EXPECT_LT(low, std::min(ends[0].get<double>(), ends[1].get<double>())) << key;
        EXPECT_GT(high, std::max(ends[0].get<double>(), ends[1].get<double>())) << key;
    }
    // The negative control: one key alone has no combination beyond its own ends.
    const auto one = nlohmann::json::parse(pfsim("check prefetch_demo --uncertainty --vary sdma.doorbell_latency --json").out)["cases"][0];
    EXPECT_EQ(one["combined"]["lowest"]["gain_pct"], one["per_key"]["sdma.doorbell_latency"][1]);
    EXPECT_EQ(one["low_pct"], one["per_key"]["sdma.doorbell_latency"][1]);
    // A gain no key moves: no parameter is its most sensitive, and no combination runs.
    const auto still = nlohmann::json::parse(pfsim("check vector_chain --uncertainty --vary sdma.doorbell_latency --json").out)["cases"][0];
    EXPECT_EQ(still["per_key"]["sdma.doorbell_latency"], nlohmann::json::array({0.0, 0.0}));
    EXPECT_EQ(still["most_sensitive"], "");
    EXPECT_TRUE(still["combined"]["lowest"]["gain_pct"].is_null() && still["combined"]["highest"]["sets"].empty());
    EXPECT_EQ(pfsim("check prefetch_demo --uncertainty --vary l2.size").status, 2);  // no range
    EXPECT_EQ(pfsim("check prefetch_demo --vary core.scalar_op").status, 2);        // without --uncertainty
}

TEST(Calibrate, RunsFromAnyDirectory) {
    const std::string out = tmp("elsewhere.txt");
    const std::string exe = std::filesystem::absolute(std::getenv("PFSIM")).string();
    const int raw = std::system(("cd " + tmp("") + " && " + exe + " calibrate --only miss_latency >" + out + " 2>&1").c_str());
    EXPECT_EQ(WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, 0) << slurp(out);
    EXPECT_NE(slurp(out).find("0 out of tolerance"), std::string::npos) << slurp(out);
}

TEST(Docs, ConfigurationReferenceIsCurrent) {
    const Result r = pfsim("config --markdown");
    ASSERT_EQ(r.status, 0);
    EXPECT_NE(slurp("docs/configuration.md").find(r.out), std::string::npos)
        << "docs/configuration.md is stale: run tools/update_config_doc.sh";
}

TEST(Docs, StatsReferenceIsCurrent) {
    const Result r = pfsim("stats --markdown");
    ASSERT_EQ(r.status, 0);
    EXPECT_NE(r.out.find("| `l2.hit_rate` | ratio |"), std::string::npos) << r.out;
    EXPECT_NE(slurp("docs/stats.md").find(r.out), std::string::npos)
        << "docs/stats.md is stale: run tools/update_config_doc.sh";
    EXPECT_EQ(pfsim("stats extra").status, 2);
}

}  // namespace

// --trace output: Chrome trace-event JSON that Perfetto and chrome://tracing
// load without warnings. Checked structurally: every event well formed, every
// lane named, slices on a lane properly nested, flows and async spans paired.
#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

using pfsim::test::pfsim;
using pfsim::test::slurp;
using pfsim::test::tmp;

int64_t ns(const nlohmann::json& v) { return static_cast<int64_t>(v.get<double>() * 1000.0 + 0.5); }

// Returns "" when the trace is well formed, else what is wrong. Fills `lanes`
// with "process/thread" names that carry slices, and `counters` with counter names.
std::string check_trace(const std::string& text, std::set<std::string>* lanes, std::set<std::string>* counters) {
    const auto doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("traceEvents") || !doc["traceEvents"].is_array()) return "not trace JSON";
    std::map<int, std::string> process;
    std::map<std::pair<int, int>, std::string> thread;
    std::map<std::pair<int, int>, std::vector<std::pair<int64_t, int64_t>>> slices;
    std::map<std::string, int> flows, spans;
    for (const auto& e : doc["traceEvents"]) {
        if (!e.contains("ph") || !e.contains("pid")) return "event without ph or pid: " + e.dump();
        const std::string ph = e["ph"];
        const int pid = e["pid"];
        const int tid = e.value("tid", 0);
        if (ph == "M") {
            if (e["name"] == "process_name") process[pid] = e["args"]["name"];
            if (e["name"] == "thread_name") thread[{pid, tid}] = e["args"]["name"];
            continue;
        }
        if (!e.contains("ts") || !e["ts"].is_number()) return "event without ts: " + e.dump();
        if (ph == "X") {
            if (!e.contains("dur") || e["dur"].get<double>() < 0) return "slice without dur: " + e.dump();
            slices[{pid, tid}].push_back({ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])});
        } else if (ph == "s" || ph == "f") {
            // A JavaScript viewer reads ids as doubles: above 2^53 distinct ids merge.
            if (!e["id"].is_number_unsigned() || e["id"].get<uint64_t>() >= (uint64_t{1} << 53)) {
                return "flow id not an integer below 2^53: " + e["id"].dump();
            }
            flows[e["id"].dump()] += ph == "s" ? 1 : -1;
            if (ph == "f" && e.value("bp", "") != "e") return "flow end not bound to its enclosing slice";
        } else if (ph == "b" || ph == "e") {
            spans[e["cat"].get<std::string>() + e["id"].get<std::string>()] += ph == "b" ? 1 : -1;
        } else if (ph == "C") {
            counters->insert(e["name"].get<std::string>());
        } else if (ph != "i") {
            return "unexpected phase " + ph;
        }
    }
    for (const auto& [key, list] : slices) {
        if (!process.count(key.first) || !thread.count(key)) return "slices on an unnamed lane";
        lanes->insert(process[key.first] + "/" + thread[key]);
        auto sorted = list;
        std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return a.first != b.first ? a.first < b.first : a.second > b.second; });
        std::vector<int64_t> open_ends;
        for (const auto& [start, end] : sorted) {
            while (!open_ends.empty() && open_ends.back() <= start) open_ends.pop_back();
            if (!open_ends.empty() && end > open_ends.back()) {
                return "slices overlap without nesting on " + thread[key] + " of " + process[key.first] + " at " +
                       std::to_string(start) + " ns";
            }
            open_ends.push_back(end);
        }
    }
    for (const auto& [id, n] : flows) {
        if (n != 0) return "unpaired flow " + id;
    }
    for (const auto& [id, n] : spans) {
        if (n != 0) return "unpaired async span " + id;
    }
    return "";
}

TEST(Trace, TheCheckerCatchesBrokenTraces) {
    std::set<std::string> lanes, counters;
    const std::string names =
        R"({"ph":"M","pid":1,"tid":0,"name":"process_name","args":{"name":"p"}},)"
        R"({"ph":"M","pid":1,"tid":1,"name":"thread_name","args":{"name":"t"}},)";
    auto doc = [&](const std::string& events) { return "{\"traceEvents\":[" + names + events + "]}"; };
    EXPECT_EQ(check_trace(doc(R"({"ph":"X","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"X","pid":1,"tid":1,"ts":2,"dur":1})"),
                          &lanes, &counters), "");
    EXPECT_NE(check_trace(doc(R"({"ph":"X","pid":1,"tid":1,"ts":1,"dur":5},{"ph":"X","pid":1,"tid":1,"ts":3,"dur":5})"),
                          &lanes, &counters), "");
    EXPECT_NE(check_trace(doc(R"({"ph":"X","pid":1,"tid":2,"ts":1,"dur":5})"), &lanes, &counters), "");
    EXPECT_NE(check_trace(doc(R"({"ph":"s","pid":1,"tid":1,"ts":1,"id":7,"cat":"c","name":"n"})"), &lanes, &counters), "");
    const std::string far = R"({"ph":"s","pid":1,"tid":1,"ts":1,"id":9007199254740993,"cat":"c","name":"n"},)"
                            R"({"ph":"f","bp":"e","pid":1,"tid":1,"ts":2,"id":9007199254740993,"cat":"c","name":"n"})";
    EXPECT_NE(check_trace(doc(far), &lanes, &counters).find("below 2^53"), std::string::npos);
    EXPECT_NE(check_trace(doc(R"({"ph":"b","pid":1,"ts":1,"id":"0x1","cat":"c","name":"n"})"), &lanes, &counters), "");
    EXPECT_NE(check_trace("{\"traceEvents\":[", &lanes, &counters), "");
}

TEST(Trace, KernelRunTraceIsWellFormedWithEveryLane) {
    const std::string path = tmp("matmul.json");
    ASSERT_EQ(pfsim("run matmul_tiled --trace " + path).status, 0);
    std::set<std::string> lanes, counters;
    ASSERT_EQ(check_trace(slurp(path), &lanes, &counters), "");
    for (const char* lane : {"AIC 0 (cluster 0)/MTE2", "AIC 0 (cluster 0)/CUBE", "AIC 0 (cluster 0)/MTE3",
                             "AIV 24 (cluster 0, sub 0)/SCALAR", "AIV 24 (cluster 0, sub 0)/PREFETCH_WAIT",
                             "SDMA engine/channel 0", "SDMA engine/channel 1"}) {
        EXPECT_TRUE(lanes.count(lane)) << lane;
    }
    for (const char* c : {"GM read GB/s", "GM write GB/s", "L2 hit rate", "L2 lines held by prefetch",
                          "SDMA queue depth ch 0"}) {
        EXPECT_TRUE(counters.count(c)) << c;
    }
    const std::string text = slurp(path);
    EXPECT_NE(text.find("\"ph\":\"s\",\"cat\":\"prefetch\""), std::string::npos);  // post -> wait arrows
    EXPECT_NE(text.find("\"name\":\"prefetch\",\"args\":{\"bytes\":524288"), std::string::npos);  // SDMA slices
}

TEST(Trace, ManyCoresAndVectorPipesNestValidly) {
    const std::string path = tmp("gather.json");
    ASSERT_EQ(pfsim("run gather_rows --trace " + path).status, 0);
    std::set<std::string> lanes, counters;
    ASSERT_EQ(check_trace(slurp(path), &lanes, &counters), "");
    EXPECT_TRUE(lanes.count("AIV 30 (cluster 3, sub 0)/VECTOR"));
}

TEST(Trace, SameConfigurationGivesTheSameTraceBytes) {
    const std::string a = tmp("a.json"), b = tmp("b.json");
    ASSERT_EQ(pfsim("run gather_rows --trace " + a).status, 0);
    ASSERT_EQ(pfsim("run gather_rows --trace " + b).status, 0);
    EXPECT_EQ(slurp(a), slurp(b));
    EXPECT_GT(slurp(a).size(), 10000u);
}

TEST(Trace, SizeBoundTruncatesAndSaysSo) {
    const std::string path = tmp("small.json");
    ASSERT_EQ(pfsim("run gather_rows --set trace.max_bytes=8KiB --trace " + path).status, 0);
    const std::string text = slurp(path);
    EXPECT_LT(text.size(), 9000u);
    std::set<std::string> lanes, counters;
    EXPECT_EQ(check_trace(text, &lanes, &counters), "");
    EXPECT_NE(text.find("trace truncated at"), std::string::npos);
    // Wherever the bound falls, no flow or span is left open (their two ends
    // are written together or not at all). 960 rows: 5 blocks a core, a
    // 700 KB trace, every bound below cuts it.
    for (int kib = 16; kib <= 64; kib += 3) {
        const std::string cut = tmp("cut.json");
        ASSERT_EQ(pfsim("run gemv_stream --arg rows=960 --set trace.max_bytes=" + std::to_string(kib) + "KiB --trace " + cut).status, 0);
        EXPECT_EQ(check_trace(slurp(cut), &lanes, &counters), "") << kib << " KiB";
    }
}

TEST(Trace, ReplayMovingAGibibyteGivesATraceThatLoads) {
    std::string lines;
    for (uint64_t a = 0; a < (1ull << 30); a += 65536) lines += "R 0x" + [&] {
        char b[24];
        std::snprintf(b, sizeof b, "%llx", static_cast<unsigned long long>(a));
        return std::string(b);
    }() + " 65536\n";
    lines += "P 0x40000000 4194304\n";
    const std::string trace = pfsim::test::write_file("gib.trace", lines);
    const std::string path = tmp("gib.json");
    ASSERT_EQ(pfsim("replay " + trace + " --trace " + path).status, 0);
    std::set<std::string> lanes, counters;
    ASSERT_EQ(check_trace(slurp(path), &lanes, &counters), "");
    EXPECT_TRUE(lanes.count("replay/accesses"));
    EXPECT_TRUE(lanes.count("SDMA engine/channel 0"));
    EXPECT_TRUE(counters.count("GM read GB/s"));
}

TEST(Trace, CheckWritesOneTracePerRun) {
    const std::string prefix = tmp("check");
    ASSERT_EQ(pfsim("check prefetch_demo --trace " + prefix).status, 0);
    std::set<std::string> lanes, counters;
    EXPECT_EQ(check_trace(slurp(prefix + ".prefetch_demo.on.json"), &lanes, &counters), "");
    EXPECT_EQ(check_trace(slurp(prefix + ".prefetch_demo.off.json"), &lanes, &counters), "");
}

TEST(Trace, UnwritableTracePathIsBadInput) {
    const auto r = pfsim("run prefetch_demo --trace /nonexistent/dir/t.json");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/nonexistent/dir/t.json"), std::string::npos);
}

}  // namespace

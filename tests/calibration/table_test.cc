// The calibration table's reader and its expressions (calibration/table.h).
#include "calibration/table.h"

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

namespace pfsim::calibration {
namespace {

// The message `read_table(text)` throws; "" if it reads.
std::string table_error(const std::string& text) {
    try {
        read_table(text, "t.toml");
    } catch (const TableError& e) {
        return e.what();
    }
    return "";
}

double eval(const std::string& text, const std::vector<nlohmann::json>& runs = {}) {
    Inputs in;
    in.runs = &runs;
    in.ps = [](const std::string& key) { return key == "l2.hit_latency" ? 27340.0 : -1.0; };
    in.hz = [](const std::string&) { return 1.85e9; };
    return Expression(text, "t").evaluate(in);
}

const char* kFigure = R"([[figure]]
id = "a"
what = "w"
unit = "u"
source = "s"
low = 1
high = "2 * 1.5"
runs = [{ case = "calib_stream", args = ["cores=1"] }, { trace = "same_line" }]
value = "run[0].x / run[1].y"
)";

TEST(Table, TheBuiltInTableReads) {
    std::ifstream in("calibration/figures.toml");
    std::stringstream text;
    text << in.rdbuf();
    const std::vector<Figure> figures = read_table(text.str(), "figures.toml");
    EXPECT_EQ(figures.size(), 36u);
    int gaps = 0;
    for (const Figure& f : figures) {
        EXPECT_FALSE(f.runs.empty()) << f.id;
        gaps += !f.known_gap.empty();
    }
    EXPECT_EQ(gaps, 4);
    EXPECT_EQ(figures[0].id, "gm_per_core");
    EXPECT_EQ(figures[0].where, "figures.toml:11");
}

TEST(Table, AFigureReadsWithItsRunsInOrder) {
    const std::vector<Figure> f = read_table(kFigure, "t.toml");
    ASSERT_EQ(f.size(), 1u);
    ASSERT_EQ(f[0].runs.size(), 2u);
    EXPECT_EQ(f[0].runs[0].target, "calib_stream");
    EXPECT_EQ(f[0].runs[0].args, std::vector<std::string>{"cores=1"});
    EXPECT_TRUE(f[0].runs[0].warmup);
    EXPECT_EQ(f[0].runs[1].trace, "same_line");
    EXPECT_EQ(f[0].low.evaluate({}), 1);
    EXPECT_EQ(f[0].high.evaluate({}), 3);
    const std::vector<nlohmann::json> runs = {{{"x", 6}}, {{"y", 4}}};
    EXPECT_EQ(f[0].value.evaluate({&runs, nullptr, nullptr}), 1.5);
}

// The arithmetic is C++'s, bit for bit: the same operations in the same order.
TEST(Expression, ComputesWhatTheSameCxxComputes) {
    EXPECT_EQ(eval("32 * 0.95"), 32 * 0.95);
    EXPECT_EQ(eval("1 - 0.035 * 1.3"), 1 - 0.035 * 1.3);
    EXPECT_EQ(eval("8 / 2 / 2"), 2);
    EXPECT_EQ(eval("2 - 3 - 4"), -5);
    EXPECT_EQ(eval("-(1 + 2) * 3"), -9);
    EXPECT_EQ(eval("1.5e3 + .5"), 1500.5);
    EXPECT_EQ(eval("ps(\"l2.hit_latency\") / 1e3 * 0.95"), 27340.0 / 1e3 * 0.95);
    EXPECT_EQ(eval("hz(\"chip.clock\")"), 1.85e9);
    const std::vector<nlohmann::json> runs = {
        {{"tasks", {{{"start_ns", 10}, {"end_ns", 1010}}, {{"start_ns", 0}, {"end_ns", 4}}}},
         {"warmup", "48/48 channels warmed in 4.41702 ms"}}};
    EXPECT_EQ(eval("67.1e9 / ((run[0].tasks[0].end_ns - run[0].tasks[0].start_ns) / 1e3) / 1e6", runs),
              67.1e9 / ((1010.0 - 10.0) / 1e3) / 1e6);
    EXPECT_EQ(eval("run[0].tasks[1].end_ns", runs), 4);
    EXPECT_EQ(eval("warmup_ms(run[0].warmup)", runs), 4.41702);
}

TEST(Expression, ASummaryLackingAFieldNamesIt) {
    const std::vector<nlohmann::json> runs = {{{"timed_pass", {{"ns", 1}}}, {"warmup", 3}}};
    auto message = [&](const std::string& text) {
        try {
            eval(text, runs);
        } catch (const std::runtime_error& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_EQ(message("run[0].timed_pass.gbps"), "run summary has no timed_pass.gbps");
    EXPECT_EQ(message("run[0].tasks[2].end_ns"), "run summary has no tasks");
    EXPECT_EQ(message("run[0].timed_pass"), "run summary's timed_pass is not a number");
    EXPECT_EQ(message("warmup_ms(run[0].warmup)"), "run summary's warm-up '' gives no time");
    EXPECT_EQ(message("run[0].timed_pass.ns"), "");  // the control
}

TEST(Expression, TextThatDoesNotParseIsNamedWithItsPlace) {
    for (const auto& [text, what] : std::vector<std::pair<std::string, std::string>>{
             {"1 +", "expected a value at character 4"},
             {"(1 + 2", "expected ')' at character 7"},
             {"2 ** 3", "expected a value"},
             {"run[0]", "run[0] needs a key"},
             {"run[x].a", "expected an index"},
             {"clock * 2", "unknown name 'clock' (known: run, ps, hz, warmup_ms) at character 1"},
             {"ps(l2.hit_latency)", "expected '\"'"},
             {"1e", "an exponent without digits"},
             {"1.2.3", "'1.2.3' is not a number"},
             {"1 2", "unexpected '2'"},
         }) {
        try {
            Expression(text, "t.toml:3: figure a: value");
            ADD_FAILURE() << text << " parsed";
        } catch (const TableError& e) {
            const std::string m = e.what();
            EXPECT_EQ(m.rfind("t.toml:3: figure a: value: '" + text + "': ", 0), 0u) << m;
            EXPECT_NE(m.find(what), std::string::npos) << m;
        }
    }
    EXPECT_NO_THROW(Expression("(1 + 2) * run[3].a.b[0] / ps(\"k\")", "t"));  // the control
}

TEST(Table, BadTablesAreRefusedNamingTheLineAndKey) {
    const std::string figure = kFigure;
    auto with = [&](const std::string& from, const std::string& to) {
        std::string t = figure;
        const size_t at = t.find(from);
        EXPECT_NE(at, std::string::npos) << from;
        return t.replace(at, from.size(), to);
    };
    EXPECT_EQ(table_error(figure), "");  // the control
    EXPECT_EQ(table_error(with("unit = \"u\"\n", "unit = \"u\"\ncolour = 1\n")),
              "t.toml:5: figure: unknown key 'colour' (known: high, id, known_gap, low, runs, source, unit, value, what)");
    EXPECT_EQ(table_error(with("what = \"w\"\n", "")), "t.toml:1: figure a: what: missing");
    EXPECT_EQ(table_error(with("low = 1", "low = true")), "t.toml:6: figure a: low: must be a number or an expression");
    EXPECT_EQ(table_error(with("low = 1", "low = \"run[0].x\"")), "t.toml:6: figure a: low: the published bounds read no run");
    EXPECT_EQ(table_error(with("run[1].y", "run[2].y")), "t.toml:9: figure a: value: reads run[2] of 2 runs");
    EXPECT_EQ(table_error(with("{ trace = \"same_line\" }", "{ trace = \"same_line\", case = \"x\" }")),
              "t.toml:8: figure a: runs: case: a run names a case or a trace, one of them");
    EXPECT_EQ(table_error(with("{ trace = \"same_line\" }", "{ trace = \"same_line\", args = [\"a=1\"] }")),
              "t.toml:8: figure a: runs: trace: a replayed trace takes no args, sets or warmup");
    EXPECT_EQ(table_error(with("args = [\"cores=1\"]", "args = [1]")), "t.toml:8: figure a: runs: args: must be an array of strings");
    EXPECT_EQ(table_error(with("args = [\"cores=1\"]", "warmup = 0")), "t.toml:8: figure a: runs: warmup: must be true or false");
    EXPECT_EQ(table_error(with("runs = [", "runs = [{ cases = \"x\" }, ")).substr(0, 45),
              "t.toml:8: figure a: runs: unknown key 'cases'");
    EXPECT_EQ(table_error(with("runs = [{ case = \"calib_stream\", args = [\"cores=1\"] }, { trace = \"same_line\" }]", "runs = []")),
              "t.toml:8: figure a: runs: must be an array of at least one run");
    EXPECT_EQ(table_error(figure + figure), "t.toml:11: figure a: id: a second figure of this id");
    EXPECT_EQ(table_error("[[figures]]\n"), "t.toml:1: unknown key 'figures' (known: figure)");
    EXPECT_EQ(table_error(""), "t.toml: no [[figure]]");
    EXPECT_EQ(table_error("[[figure]\n").substr(0, 9), "t.toml:1:");
    EXPECT_EQ(table_error("[[figure]]\nid = \"a\" # \xc2\xa1\nwhat = \xc2\xa1\n").substr(0, 9), "t.toml:3:");
}

}  // namespace
}  // namespace pfsim::calibration

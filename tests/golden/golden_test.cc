// Golden outputs (traces/golden): a model change that alters a summary or a
// trace fails here, saying what changed. If the change is meant, regenerate them
// with tools/update_golden.sh and commit the new files.
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

using pfsim::test::pfsim;
using pfsim::test::slurp;
using pfsim::test::tmp;

struct Golden {
    std::string name, args;
};

std::vector<Golden> manifest() {
    std::vector<Golden> out;
    std::istringstream in(slurp("traces/golden/MANIFEST"));
    std::string line;
    while (std::getline(in, line)) {
        if (line.empty() || line[0] == '#') continue;
        std::istringstream fields(line);
        Golden g;
        fields >> g.name;
        std::getline(fields, g.args);
        out.push_back(g);
    }
    return out;
}

// Paths whose values differ between two JSON documents (at most 20).
void differences(const nlohmann::json& a, const nlohmann::json& b, const std::string& path, std::vector<std::string>* out) {
    if (out->size() >= 20) return;
    if (a.is_object() && b.is_object()) {
        for (auto it = a.begin(); it != a.end(); ++it) {
            differences(it.value(), b.contains(it.key()) ? b[it.key()] : nlohmann::json(), path + "." + it.key(), out);
        }
        for (auto it = b.begin(); it != b.end(); ++it) {
            if (!a.contains(it.key())) out->push_back(path + "." + it.key() + ": new");
        }
    } else if (a != b) {
        out->push_back(path + ": " + a.dump().substr(0, 80) + " -> " + b.dump().substr(0, 80));
    }
}

std::string first_line_difference(const std::string& a, const std::string& b) {
    std::istringstream ia(a), ib(b);
    std::string la, lb;
    for (int n = 1;; ++n) {
        const bool ga = static_cast<bool>(std::getline(ia, la)), gb = static_cast<bool>(std::getline(ib, lb));
        if (!ga && !gb) return "";
        if (la != lb || ga != gb) return "line " + std::to_string(n) + ":\n  golden: " + la + "\n  now:    " + lb;
    }
}

TEST(Golden, OutputsMatchTheCommittedOnes) {
    const std::vector<Golden> goldens = manifest();
    ASSERT_GE(goldens.size(), 4u);
    for (const Golden& g : goldens) {
        const std::string trace = tmp(g.name + ".trace.json");
        const auto r = pfsim(g.args + " --json --trace " + trace);
        ASSERT_EQ(r.status, 0) << g.name << ": " << r.err;
        const std::string summary = slurp("traces/golden/" + g.name + ".summary.json");
        if (summary != r.out) {
            std::vector<std::string> diffs;
            differences(nlohmann::json::parse(summary), nlohmann::json::parse(r.out), g.name, &diffs);
            std::string report;
            for (const std::string& d : diffs) report += "  " + d + "\n";
            ADD_FAILURE() << g.name << ".summary.json changed (tools/update_golden.sh regenerates it):\n" << report;
        }
        const std::string diff = first_line_difference(slurp("traces/golden/" + g.name + ".trace.json"), slurp(trace));
        EXPECT_EQ(diff, "") << g.name << ".trace.json changed at " << diff;
    }
}

TEST(Golden, AChangedModelIsCaught) {
    // Negative control: the same command under a slower GM no longer matches.
    const Golden g = manifest().front();
    const auto r = pfsim(g.args + " --json --set gm.read_latency=400cycles");
    ASSERT_EQ(r.status, 0);
    std::vector<std::string> diffs;
    differences(nlohmann::json::parse(slurp("traces/golden/" + g.name + ".summary.json")), nlohmann::json::parse(r.out),
                g.name, &diffs);
    EXPECT_FALSE(diffs.empty());
}

}  // namespace

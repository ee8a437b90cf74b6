// pfsim diff A B: per-kernel time, where the time went, and counter deltas.
#include <cmath>
#include <cstdio>
#include <iostream>
#include <set>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/documents.h"
#include "cli/options.h"

namespace pfsim {

namespace {

std::string base_name(const std::string& name) { return name.substr(0, name.find(" (")); }

// Pairs kernels by name, then by name without the "(prefetch ...)" suffix, each
// with the first of B not yet paired (so repeated names pair in order: the k-th
// of A with the k-th of B); two single-kernel documents pair whatever their names.
std::vector<std::pair<const KernelFigures*, const KernelFigures*>> pair_up(const Document& a, const Document& b) {
    std::vector<std::pair<const KernelFigures*, const KernelFigures*>> out;
    if (a.kernels.size() == 1 && b.kernels.size() == 1) return {{&a.kernels[0], &b.kernels[0]}};
    std::set<const KernelFigures*> used;
    for (const KernelFigures& ka : a.kernels) {
        const KernelFigures* match = nullptr;
        for (const KernelFigures& kb : b.kernels) {
            if (!match && !used.count(&kb) && kb.name == ka.name) match = &kb;
        }
        for (const KernelFigures& kb : b.kernels) {
            if (!match && !used.count(&kb) && base_name(kb.name) == base_name(ka.name)) match = &kb;
        }
        if (match) {
            used.insert(match);
            out.push_back({&ka, match});
        }
    }
    return out;
}

nlohmann::json compare(const std::map<std::string, double>& a, const std::map<std::string, double>& b) {
    nlohmann::json out = nlohmann::json::object();
    std::set<std::string> keys;
    for (const auto& [k, v] : a) keys.insert(k);
    for (const auto& [k, v] : b) keys.insert(k);
    for (const std::string& k : keys) {
        const double va = a.count(k) ? a.at(k) : 0, vb = b.count(k) ? b.at(k) : 0;
        out[k] = {{"a", va}, {"b", vb}, {"delta", vb - va}};
    }
    return out;
}

}  // namespace

int cmd_diff(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {}, {"--max-regression"});
    if (o.positional.size() != 2) throw UsageError("diff takes two files: A B");
    double limit = -1;
    const std::string text = value_of(o, "--max-regression", "");
    if (!text.empty()) {
        try {
            size_t used = 0;
            limit = std::stod(text, &used);
            if (used != text.size() || !std::isfinite(limit) || limit < 0) throw std::invalid_argument("");
        } catch (const std::exception&) {
            throw UsageError("--max-regression takes a percentage >= 0, not '" + text + "'");
        }
    }
    const Document a = read_document(user_path(o.positional[0]));
    const Document b = read_document(user_path(o.positional[1]));
    const auto pairs = pair_up(a, b);
    if (pairs.empty()) throw UsageError("no kernel of " + a.path + " appears in " + b.path);

    nlohmann::json rows = nlohmann::json::array();
    std::vector<std::string> regressions;
    if (limit >= 0) {  // under the gate a kernel of A that B lacks is a regression, not a silent drop
        for (const KernelFigures& ka : a.kernels) {
            bool paired = false;
            for (const auto& [pa, pb] : pairs) paired |= pa == &ka;
            if (!paired) regressions.push_back(ka.name + " is missing from B");
        }
    }
    for (const auto& [ka, kb] : pairs) {
        const double delta_pct = ka->time_ns > 0 ? (kb->time_ns - ka->time_ns) / ka->time_ns * 100 : 0;
        nlohmann::json row = {{"name", ka->name},
                              {"name_b", kb->name},
                              {"time_a_ns", ka->time_ns},
                              {"time_b_ns", kb->time_ns},
                              {"delta_pct", delta_pct},
                              {"lanes", compare(ka->lanes, kb->lanes)},
                              {"counters", compare(ka->counters, kb->counters)}};
        if (limit >= 0 && ka->time_ns <= 0) {  // no percentage to gate on
            regressions.push_back(ka->name + " has no time in A: B cannot be compared with it");
        } else if (limit >= 0 && kb->time_ns <= 0) {
            regressions.push_back(ka->name + " has no time in B (it failed or did not run)");
        } else if (limit >= 0 && delta_pct > limit) {
            regressions.push_back(ka->name + " is " + std::to_string(delta_pct) + " % slower in B (limit " + text + " %)");
        }
        rows.push_back(row);
    }
    if (o.json) {
        std::cout << nlohmann::json{{"schema", "pfsim.diff/1"}, {"a", a.path}, {"b", b.path}, {"kernels", rows},
                                    {"regressions", regressions}}
                         .dump(2)
                  << "\n";
    } else {
        std::printf("A: %s (%s)\nB: %s (%s)\n\n", a.path.c_str(), a.kind.c_str(), b.path.c_str(), b.kind.c_str());
        for (const auto& row : rows) {
            std::printf("%-32s %14.3f us -> %14.3f us  %+8.2f %%\n", row["name"].get<std::string>().c_str(),
                        row["time_a_ns"].get<double>() / 1e3, row["time_b_ns"].get<double>() / 1e3,
                        row["delta_pct"].get<double>());
            for (const char* group : {"lanes", "counters"}) {
                for (auto it = row[group].begin(); it != row[group].end(); ++it) {
                    const double d = it.value()["delta"].get<double>();
                    if (d == 0) continue;
                    std::printf("    %-28s %16.6g -> %16.6g  (%+.6g)\n", it.key().c_str(), it.value()["a"].get<double>(),
                                it.value()["b"].get<double>(), d);
                }
            }
        }
    }
    for (const std::string& r : regressions) std::cerr << "pfsim: regression: " << r << "\n";
    return regressions.empty() ? 0 : 1;
}

}  // namespace pfsim

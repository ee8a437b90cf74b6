#include "cli/batch.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "base/atomic_file.h"
#include "base/json_integer.h"
#include "cli/options.h"

namespace pfsim {

namespace fs = std::filesystem;

namespace {

constexpr int kPlanFormat = 2;  // 2: each run a run spec (session/run_spec.h), not an argument list

nlohmann::json plan_json(const BatchPlan& plan) {
    nlohmann::json points = nlohmann::json::array();
    for (const BatchPoint& p : plan.points) {
        nlohmann::json runs = nlohmann::json::array();
        for (const api::RunSpec& r : p.runs) runs.push_back(api::to_json(r));
        points.push_back({{"label", p.label}, {"runs", runs}});
    }
    return {{"pfsim_batch", kPlanFormat}, {"command", plan.command}, {"arguments", plan.arguments}, {"points", points}};
}

BatchPlan plan_from_json(const nlohmann::json& j, const std::string& path) {
    try {
        if (json_integer<int>(j.at("pfsim_batch")) != kPlanFormat) {
            throw UsageError(path + ": written by another pfsim version (batch format " +
                             j.at("pfsim_batch").dump() + ")");
        }
        BatchPlan plan;
        plan.command = j.at("command").get<std::string>();
        plan.arguments = j.at("arguments").get<std::vector<std::string>>();
        for (const nlohmann::json& p : j.at("points")) {
            BatchPoint point{p.at("label").get<std::string>(), {}};
            for (const nlohmann::json& r : p.at("runs")) point.runs.push_back(api::run_spec_from_json(r));
            plan.points.push_back(point);
        }
        return plan;
    } catch (const nlohmann::json::exception& e) {
        throw UsageError(path + ": not a pfsim batch plan (" + e.what() + ")");
    } catch (const api::BadInput& e) {
        throw UsageError(path + ": not a pfsim batch plan (" + e.what() + ")");
    }
}

std::string read_text(const std::string& path) {
    std::string text;
    read_whole_file(path, &text);  // empty when unreadable: the caller's parse says so
    return text;
}

std::string describe(const BatchPlan& plan) {
    std::string s = "pfsim " + plan.command;
    for (const std::string& a : plan.arguments) s += " " + a;
    return s + " (" + std::to_string(plan.points.size()) + " points)";
}

}  // namespace

BatchStore BatchStore::create(const std::string& dir, const BatchPlan& plan) {
    std::error_code ec;
    const fs::path root = fs::absolute(user_path(dir), ec);
    fs::create_directories(root / "points", ec);
    if (ec || access((root / "points").c_str(), W_OK) != 0) {
        throw UsageError(dir + ": cannot write (" + (ec ? ec.message() : std::string(std::strerror(errno))) + ")");
    }
    const std::string plan_path = (root / "plan.json").string();
    if (fs::exists(plan_path)) {
        const BatchStore there = open(dir);
        if (!there.plan().same_points(plan)) {
            throw UsageError(dir + " holds another batch: " + describe(there.plan()) + "; this one is " +
                             describe(plan) + ". Use another folder, or remove it");
        }
        return there;
    }
    write_atomically(plan_path, plan_json(plan).dump(1) + "\n");
    return BatchStore(root.string(), plan);
}

BatchStore BatchStore::open(const std::string& dir, const std::string& command) {
    std::error_code ec;
    const fs::path root = fs::absolute(user_path(dir), ec);
    const std::string plan_path = (root / "plan.json").string();
    if (!fs::is_regular_file(plan_path, ec)) throw UsageError(dir + ": holds no batch (no plan.json)");
    const nlohmann::json j = nlohmann::json::parse(read_text(plan_path), nullptr, false);
    if (j.is_discarded()) throw UsageError(plan_path + ": not JSON");
    BatchStore store(root.string(), plan_from_json(j, plan_path));
    if (!command.empty() && store.plan_.command != command) {
        throw UsageError(dir + ": holds a " + store.plan_.command + ", not a " + command);
    }
    return store;
}

void BatchStore::check_current(const BatchPlan& plan) const {
    if (!plan_.same_points(plan)) {
        throw UsageError(dir_ + ": its points are not what its " + plan_.command +
                         " makes today (a case file, a --config file or pfsim changed since)");
    }
}

std::string BatchStore::point_path(size_t point) const {
    char name[32];
    std::snprintf(name, sizeof name, "%06zu.json", point);
    return dir_ + "/points/" + name;
}

bool BatchStore::done(size_t point) const {
    std::error_code ec;
    return fs::is_regular_file(point_path(point), ec);
}

std::vector<size_t> BatchStore::pending() const {
    std::vector<size_t> out;
    for (size_t i = 0; i < plan_.points.size(); ++i) {
        if (!done(i)) out.push_back(i);
    }
    return out;
}

std::optional<PointResults> BatchStore::read(size_t point) const {
    if (!done(point)) return std::nullopt;
    const std::string path = point_path(point);
    const nlohmann::json j = nlohmann::json::parse(read_text(path), nullptr, false);
    const size_t runs = plan_.points.at(point).runs.size();
    if (j.is_discarded() || !j.is_array() || j.size() != runs) {
        throw UsageError(path + ": not a result of this batch's point " + std::to_string(point));
    }
    PointResults out;
    try {
        for (const nlohmann::json& c : j) {
            ChildRun r;
            r.status = json_integer<int>(c.at("status"));
            r.summary = c.at("printed_json").get<bool>() ? c.at("summary") : nlohmann::json(nlohmann::json::value_t::discarded);
            r.error_output = c.at("stderr").get<std::string>();
            out.push_back(std::move(r));
        }
    } catch (const nlohmann::json::exception& e) {
        throw UsageError(path + ": not a result of this batch (" + e.what() + ")");
    }
    return out;
}

void BatchStore::write(size_t point, const PointResults& results) const {
    nlohmann::json j = nlohmann::json::array();
    for (const ChildRun& c : results) {
        const bool printed = !c.summary.is_discarded();
        j.push_back({{"status", c.status},
                     {"printed_json", printed},
                     {"summary", printed ? c.summary : nlohmann::json()},
                     {"stderr", c.error_output}});
    }
    write_atomically(point_path(point), j.dump() + "\n");
}

std::vector<PointResults> run_points(const BatchPlan& plan, const std::vector<size_t>& points, unsigned jobs,
                                     const BatchStore* store, const std::function<void(size_t, size_t)>& progress) {
    std::vector<api::RunSpec> runs;
    std::vector<size_t> owner;                    // runs[i] belongs to points[owner[i]]
    std::vector<size_t> first(points.size()), left(points.size());  // per point: its first run, runs to go
    std::vector<PointResults> results(points.size());
    for (size_t k = 0; k < points.size(); ++k) {
        first[k] = runs.size();
        for (const auto& r : plan.points.at(points[k]).runs) {
            runs.push_back(r);
            owner.push_back(k);
        }
        left[k] = runs.size() - first[k];
        results[k].resize(left[k]);
    }
    size_t points_done = 0;
    run_children(runs, jobs, nullptr, [&](size_t i, const ChildRun& child) {
        const size_t k = owner[i];
        results[k][i - first[k]] = child;
        if (--left[k] != 0) return;
        if (store) store->write(points[k], results[k]);
        ++points_done;
        if (progress) progress(points_done, points.size());
    });
    return results;
}

std::function<void(size_t, size_t)> points_progress(const std::string& what) {
    const bool tty = isatty(STDERR_FILENO);
    return [what, tty](size_t done, size_t total) {
        if (tty) {
            const int bar = total ? static_cast<int>(30 * done / total) : 30;
            std::fprintf(stderr, "\r%s [%s%s] %zu/%zu points", what.c_str(), std::string(bar, '#').c_str(),
                         std::string(30 - bar, '.').c_str(), done, total);
            if (done == total) std::fprintf(stderr, "\n");
        } else {
            std::fprintf(stderr, "%s: %zu/%zu points done\n", what.c_str(), done, total);
        }
    };
}

}  // namespace pfsim

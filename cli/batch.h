// A batch: pfsim child runs grouped into points, kept in a folder so that any
// process — a local sweep, a Slurm array task on another node, a later
// `--collect` — can run points or read them back.
//
// The folder holds plan.json (the command that made the batch and every
// point's run specs, session/run_spec.h) and points/NNNNNN.json, one per finished
// point: each child's exit status, stdout and stderr, exactly as run_children
// returned them. A point file appears whole or not at all (written to a
// temporary name, then renamed), so a killed writer never leaves half a point.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "cli/children.h"

namespace pfsim {

struct BatchPoint {
    std::string label;                           // e.g. "arg.distance=2, l2.size=48MiB"
    std::vector<api::RunSpec> runs;  // run as one point
    bool operator==(const BatchPoint& o) const { return label == o.label && runs == o.runs; }
};

struct BatchPlan {
    std::string command;                // the pfsim command that made it: "sweep"
    std::vector<std::string> arguments;  // its arguments that define the points (no output or execution options)
    std::vector<BatchPoint> points;
    bool same_points(const BatchPlan& o) const { return command == o.command && points == o.points; }
};

// One point's children, in the order of its runs.
using PointResults = std::vector<ChildRun>;

class BatchStore {
public:
    // Opens `dir` for `plan`: creates it and writes plan.json, or, when it
    // already holds a batch, checks that it is this one (the points done stay).
    // Throws UsageError when `dir` cannot be written or holds another batch.
    static BatchStore create(const std::string& dir, const BatchPlan& plan);
    // Opens a folder that holds a batch of `command` (any command when empty);
    // UsageError when it holds none, or one of another command.
    static BatchStore open(const std::string& dir, const std::string& command = "");
    // For --collect: UsageError unless `plan`, what the stored arguments make
    // today, has the stored points (a case file or pfsim changed since).
    void check_current(const BatchPlan& plan) const;

    const std::string& dir() const { return dir_; }
    const BatchPlan& plan() const { return plan_; }
    // Whether the point's result is there (a point file is whole or absent, so
    // its presence is enough; read() checks its content).
    bool done(size_t point) const;
    // Points with no result yet, in plan order.
    std::vector<size_t> pending() const;
    std::optional<PointResults> read(size_t point) const;
    // Atomic: a reader sees the whole point or none of it. Throws UsageError on a write error.
    void write(size_t point, const PointResults& results) const;

private:
    BatchStore(std::string dir, BatchPlan plan) : dir_(std::move(dir)), plan_(std::move(plan)) {}
    std::string point_path(size_t point) const;
    std::string dir_;  // absolute
    BatchPlan plan_;
};

// Runs the given points of `plan`, `jobs` children at a time, through
// run_children. Each point's results go to `store` (when given) as soon as its
// last child ends; `progress(points_done, points_total)` is called then.
// Returns the results in the order of `points`.
std::vector<PointResults> run_points(const BatchPlan& plan, const std::vector<size_t>& points, unsigned jobs,
                                     const BatchStore* store,
                                     const std::function<void(size_t, size_t)>& progress = nullptr);

// The progress callback the commands share: a bar on a terminal, else a line
// per finished point ("WHAT: 3/12 points done").
std::function<void(size_t, size_t)> points_progress(const std::string& what);

}  // namespace pfsim

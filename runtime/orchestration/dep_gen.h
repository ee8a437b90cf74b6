// simpler's dep-gen output (--enable-dep-gen): deps.json, the task graph the
// orchestration built, as its deps_viewer, swimlane_converter and
// sched_overhead_analysis read it. Written from pfsim's own graph (each
// GraphTask's edges), not replayed from a trace: the edges are the ones the
// run's scheduler honoured. docs/python.md#diagnostics describes the file.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "runtime/orchestration/task_graph.h"

namespace pfsim::rt {

// Writes deps.json of `tasks` (a graph's, in submission order) to `path`:
//  - tasks[]: each task's simpler id (ring << 32 | place), its scope's mode,
//    set_allow_early_resolve as early_dispatch, kernel ids, blocks, and its
//    tensor arguments (an OUTPUT has no tensor yet when submitted: no tensor fields);
//  - tensors[]: each buffer (address, version) an argument names, numbered from 1;
//  - edges[]: GraphTask::edges, ids as tasks[], the consumer's slice on every
//    edge bound to a tensor and the producer's on TensorMap edges.
// std::runtime_error naming the file when it cannot be written.
void write_deps_json(const std::string& path, const TaskWindow<GraphTask>& tasks);

}  // namespace pfsim::rt

// Running a batch's points as one Slurm job array. pfsim schedules nothing
// itself: sbatch submits, each array task runs `pfsim batch-task DIR N` (a
// chunk of points through run_points, results into the batch folder), squeue
// tells what is left. The folder must be on a filesystem every node sees.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "cli/batch.h"
#include "cli/options.h"

namespace pfsim {

struct SlurmOptions {
    std::string partition;                // empty: the cluster's default
    std::vector<std::string> sbatch_args;  // passed to sbatch as given, one argument each
    size_t chunk = 0;                      // points per array task; 0: as few as the array limit allows, at least 1
};

// --slurm's options (--partition, --slurm-opt, --chunk); UsageError on a bad
// value or when they (or --wait) are given without --slurm.
SlurmOptions slurm_options(const CommonOptions& o);
inline const std::vector<std::string> kSlurmValues = {"--partition", "--slurm-opt", "--chunk"};

// Everything that can be checked before submitting, each a UsageError naming
// the reason: sbatch, squeue and sinfo on PATH, the partition exists, the
// array fits the cluster's MaxArraySize.
void check_slurm(const SlurmOptions& options, size_t points);

// Submits one array over `points` of the store (point indices, in order) and
// returns its job id. Writes DIR/slurm/submit-K.{json,sh,pfsim} (the points,
// the batch script, a copy of this binary that the tasks run); task logs go to
// DIR/slurm/JOB_TASK.log. UsageError, and nothing submitted, when sbatch
// refuses or an earlier array of the folder is still pending or running.
std::string submit_array(const BatchStore& store, const std::vector<size_t>& points, const SlurmOptions& options,
                         const std::string& what);

// Follows the array until none of its tasks is pending or running, printing a
// progress line on stderr (points done from the folder, tasks from squeue)
// every `poll_seconds`.
void follow_array(const BatchStore& store, const std::string& job, const std::string& what, double poll_seconds);

// The --slurm path of a batch command (sweep, check, calibrate): needs --out
// DIR, refuses --jobs, checks the cluster (check_slurm), opens DIR for `plan`
// and submits its pending points. Without --wait: the job id on stdout, how
// to follow it on stderr, and nullopt (nothing to report yet); with --wait:
// follows the array and returns the folder to report from.
std::optional<BatchStore> run_on_slurm(const BatchPlan& plan, const CommonOptions& o, const std::string& what);

}  // namespace pfsim

// pfsim's commands. Each returns the process exit status.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "session/run.h"
#include "session/run_spec.h"
#include "session/shipped_cases.h"

namespace pfsim {

int run_cli(const std::vector<std::string>& args);
int cmd_config(const std::vector<std::string>& args);
int cmd_stats(const std::vector<std::string>& args);
int cmd_replay(const std::vector<std::string>& args);
int cmd_run(const std::vector<std::string>& args);
int cmd_check(const std::vector<std::string>& args);
int cmd_kernels(const std::vector<std::string>& args);
int cmd_diff(const std::vector<std::string>& args);
int cmd_report(const std::vector<std::string>& args);
int cmd_sweep(const std::vector<std::string>& args);
int cmd_calibrate(const std::vector<std::string>& args);
int cmd_compile(const std::vector<std::string>& args);
int cmd_case_data(const std::vector<std::string>& args);
int cmd_device(const std::vector<std::string>& args);
int cmd_test(const std::vector<std::string>& args);
int cmd_python_path(const std::vector<std::string>& args);
// What a Slurm array task of a batch runs: `batch-task DIR K` runs the chunk
// $SLURM_ARRAY_TASK_ID of submission K (cli/slurm.h), $SLURM_CPUS_PER_TASK
// children at a time (default 1).
int cmd_batch_task(const std::vector<std::string>& args);
// The executor's child (cli/children.h): `run-request` runs the one run spec
// (session/run_spec.h) it reads as JSON on stdin and prints its summary.
int cmd_run_request(const std::vector<std::string>& args);
// Prints a replay's summary as `pfsim replay` does (--json: the document); its
// exit status (replay_status).
int print_replay(const nlohmann::json& summary, bool json);
// 1 for a failed replay or a --verify mismatch, else 0.
int replay_status(const nlohmann::json& summary);
// Runs one spec in this process on a fresh die (api::Session): its summary and
// the exit status `pfsim run-request` gives for it. Throws what run-request's
// command throws for bad input.
int run_spec_here(const api::RunSpec& spec, nlohmann::json* summary);

}  // namespace pfsim

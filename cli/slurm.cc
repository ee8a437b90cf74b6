#include "cli/slurm.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/atomic_file.h"
#include "base/json_integer.h"
#include "cli/commands.h"

namespace pfsim {

namespace fs = std::filesystem;

namespace {

std::string slurp(const std::string& path) {
    std::string text;
    read_whole_file(path, &text);  // empty when unreadable: the caller's parse says so
    return text;
}

std::string trimmed(std::string s) {
    while (!s.empty() && (s.back() == '\n' || s.back() == ' ' || s.back() == '\r')) s.pop_back();
    return s;
}

bool on_path(const std::string& tool) {
    const char* path = std::getenv("PATH");
    std::stringstream dirs(path ? path : "");
    for (std::string d; std::getline(dirs, d, ':');) {
        if (!d.empty() && access((d + "/" + tool).c_str(), X_OK) == 0) return true;
    }
    return false;
}

// A value quoted for /bin/sh.
std::string sh_quote(const std::string& s) {
    std::string out = "'";
    for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

// The cluster's MaxArraySize (the largest array index + 1), 1001 when it cannot be read.
size_t max_array_size() {
    const ProgramRun r = run_program({"scontrol", "show", "config"});
    std::stringstream lines(r.out);
    for (std::string line; std::getline(lines, line);) {
        if (line.rfind("MaxArraySize", 0) != 0) continue;
        const size_t eq = line.find('=');
        if (eq != std::string::npos) return std::strtoull(line.c_str() + eq + 1, nullptr, 10);
    }
    return 1001;
}

// How many tasks of `job` are pending or running; 0 once it ended (or was purged).
size_t unfinished_tasks(const std::string& job, size_t* running = nullptr) {
    const ProgramRun q = run_program({"squeue", "-h", "-r", "-j", job, "-o", "%T"});
    if (q.status != 0) {
        if (q.err.find("Invalid job id") != std::string::npos) return 0;
        throw UsageError("squeue -j " + job + " failed: " + q.err);
    }
    size_t all = 0, run = 0;
    std::stringstream states(q.out);
    for (std::string s; std::getline(states, s);) {
        ++all;
        run += s == "RUNNING" || s == "COMPLETING";
    }
    if (running) *running = run;
    return all;
}

constexpr double kPollSeconds = 2;  // how often --wait asks squeue

size_t chunk_for(const SlurmOptions& o, size_t points, size_t max_array) {
    if (o.chunk) return o.chunk;
    return std::max<size_t>(1, (points + max_array - 1) / max_array);
}

nlohmann::json read_submission(const std::string& path) {
    const nlohmann::json j = nlohmann::json::parse(slurp(path), nullptr, false);
    if (j.is_discarded() || !j.contains("points") || !j.contains("chunk")) {
        throw UsageError(path + ": not a pfsim submission");
    }
    return j;
}

}  // namespace

SlurmOptions slurm_options(const CommonOptions& o) {
    SlurmOptions s;
    const bool slurm = has_flag(o, "--slurm");
    for (const std::string& v : kSlurmValues) {
        if (!slurm && o.values.count(v)) throw UsageError(v + " is an option of --slurm");
    }
    if (!slurm && has_flag(o, "--wait")) throw UsageError("--wait is an option of --slurm");
    s.partition = value_of(o, "--partition", "");
    if (o.values.count("--partition") && s.partition.empty()) throw UsageError("--partition needs a name");
    if (o.values.count("--slurm-opt")) s.sbatch_args = o.values.at("--slurm-opt");
    for (const std::string& a : s.sbatch_args) {
        if (a.empty() || a[0] != '-') throw UsageError("--slurm-opt takes one sbatch option, e.g. --slurm-opt=--time=30, not '" + a + "'");
        for (const char* ours : {"--array", "--output", "--error", "--parsable", "--wrap", "--chdir", "--partition"}) {
            if (a == ours || a.rfind(std::string(ours) + "=", 0) == 0) {
                throw UsageError("--slurm-opt " + a + ": pfsim sets " + ours + " itself" +
                                 (std::string(ours) == "--partition" ? " (use --partition P)" : ""));
            }
        }
    }
    const std::string chunk = value_of(o, "--chunk", "");
    if (!chunk.empty()) {
        char* end = nullptr;
        const unsigned long long n = std::strtoull(chunk.c_str(), &end, 10);
        if (chunk[0] < '0' || chunk[0] > '9' || *end != '\0' || n == 0 || n > 1000000) {
            throw UsageError("--chunk takes a whole number of points per array task from 1, not '" + chunk + "'");
        }
        s.chunk = n;
    }
    return s;
}

void check_slurm(const SlurmOptions& o, size_t points) {
    for (const char* tool : {"sbatch", "squeue", "sinfo", "scontrol"}) {
        if (!on_path(tool)) throw UsageError(std::string("--slurm: no ") + tool + " on PATH (is this a Slurm submit host?)");
    }
    if (!o.partition.empty()) {
        const ProgramRun r = run_program({"sinfo", "-h", "-o", "%R"});
        if (r.status != 0) throw UsageError("--slurm: sinfo failed: " + r.err);
        std::stringstream names(r.out);
        std::string all;
        bool found = false;
        for (std::string n; std::getline(names, n);) {
            found = found || n == o.partition;
            all += (all.empty() ? "" : ", ") + n;
        }
        if (!found) throw UsageError("--partition " + o.partition + ": no such partition (the cluster has: " + all + ")");
    }
    const size_t max_array = max_array_size();
    const size_t chunk = chunk_for(o, points, max_array);
    const size_t tasks = (points + chunk - 1) / chunk;
    if (tasks > max_array) {
        throw UsageError("--chunk " + std::to_string(o.chunk) + ": " + std::to_string(tasks) +
                         " array tasks, more than the cluster's MaxArraySize of " + std::to_string(max_array));
    }
}

std::string submit_array(const BatchStore& store, const std::vector<size_t>& points, const SlurmOptions& o,
                         const std::string& what) {
    const std::string slurm_dir = store.dir() + "/slurm";
    std::error_code ec;
    fs::create_directories(slurm_dir, ec);
    size_t k = 0;
    for (; fs::exists(slurm_dir + "/submit-" + std::to_string(k) + ".json"); ++k) {
        // Two arrays on one folder would run the same points twice.
        const std::string job = trimmed(slurp(slurm_dir + "/submit-" + std::to_string(k) + ".job"));
        if (!job.empty() && unfinished_tasks(job) > 0) {
            throw UsageError(store.dir() + ": its array job " + job +
                             " is still pending or running; wait for it (squeue -j " + job + ") or scancel it first");
        }
    }
    const std::string base = slurm_dir + "/submit-" + std::to_string(k);
    const size_t chunk = chunk_for(o, points.size(), max_array_size());
    const size_t tasks = (points.size() + chunk - 1) / chunk;
    const nlohmann::json submission = {{"points", points}, {"chunk", chunk}};
    std::ofstream(base + ".json") << submission.dump() << "\n";
    // The tasks run a copy of this binary: a rebuild while the array waits changes nothing.
    const std::string binary = base + ".pfsim";
    fs::copy_file(self_path(), binary, fs::copy_options::overwrite_existing, ec);
    if (ec) throw UsageError(binary + ": cannot write (" + ec.message() + ")");
    std::ofstream script(base + ".sh");
    script << "#!/bin/sh\n# " << what << ": " << points.size() << " points, " << chunk
           << " per array task; task $SLURM_ARRAY_TASK_ID runs its chunk, skipping points already done.\n"
           << "exec " << sh_quote(binary) << " batch-task " << sh_quote(store.dir()) << " " << k << "\n";
    script.close();
    if (!script) throw UsageError(base + ".sh: cannot write");

    std::vector<std::string> argv = {"sbatch", "--parsable", "--array=0-" + std::to_string(tasks - 1),
                                     "--job-name=pfsim-" + store.plan().command,
                                     "--output=" + slurm_dir + "/%A_%a.log",
                                     "--chdir=" + fs::current_path(ec).string()};
    if (!o.partition.empty()) argv.push_back("--partition=" + o.partition);
    argv.insert(argv.end(), o.sbatch_args.begin(), o.sbatch_args.end());
    argv.push_back(base + ".sh");
    const ProgramRun r = run_program(argv);
    const std::string job = trimmed(r.out).substr(0, trimmed(r.out).find(';'));  // "JOB[;CLUSTER]"
    if (r.status != 0 || job.empty()) {
        for (const char* ext : {".json", ".sh", ".pfsim"}) std::remove((base + ext).c_str());
        throw UsageError("sbatch refused the array: " + (r.err.empty() ? "exit " + std::to_string(r.status) : r.err));
    }
    std::ofstream(base + ".job") << job << "\n";
    return job;
}

void follow_array(const BatchStore& store, const std::string& job, const std::string& what, double poll_seconds) {
    const size_t total = store.plan().points.size();
    std::string last;
    for (int failures = 0;;) {
        size_t running = 0, tasks = 0;
        try {
            tasks = unfinished_tasks(job, &running);
            failures = 0;
        } catch (const UsageError&) {
            if (++failures == 30) throw;  // the controller away for a minute
            tasks = 1;
        }
        if (tasks == 0) break;
        char line[256];
        std::snprintf(line, sizeof line, "%s: %zu/%zu points done; array %s: %zu running, %zu waiting", what.c_str(),
                      total - store.pending().size(), total, job.c_str(), running, tasks - running);
        if (line != last) std::fprintf(stderr, "%s\n", line);
        last = line;
        std::this_thread::sleep_for(std::chrono::duration<double>(poll_seconds));
    }
    std::fprintf(stderr, "%s: array %s ended, %zu/%zu points done\n", what.c_str(), job.c_str(),
                 total - store.pending().size(), total);
}

std::optional<BatchStore> run_on_slurm(const BatchPlan& plan, const CommonOptions& o, const std::string& what) {
    const std::string out = value_of(o, "--out", "");
    if (out.empty()) throw UsageError("--slurm needs --out DIR, a folder every node of the cluster sees");
    if (o.values.count("--jobs")) {
        throw UsageError("--jobs is for local runs: ask Slurm for CPUs per task with --slurm-opt=--cpus-per-task=N");
    }
    const SlurmOptions slurm = slurm_options(o);
    check_slurm(slurm, plan.points.size());
    BatchStore store = BatchStore::create(out, plan);
    const std::vector<size_t> pending = store.pending();
    const size_t total = plan.points.size();
    if (pending.empty()) {
        std::fprintf(stderr, "pfsim: %s: all %zu points are done in %s\n", what.c_str(), total, store.dir().c_str());
    } else {
        const std::string job = submit_array(store, pending, slurm, "pfsim " + what);
        std::fprintf(stderr, "pfsim: %s: %zu of %zu points submitted as array job %s; results in %s\n", what.c_str(),
                     pending.size(), total, job.c_str(), store.dir().c_str());
        if (!has_flag(o, "--wait")) {
            std::fprintf(stderr, "pfsim: follow it with squeue -j %s; then pfsim %s --collect %s\n", job.c_str(),
                         plan.command.c_str(), out.c_str());
            std::cout << job << "\n";
            return std::nullopt;
        }
        follow_array(store, job, what, kPollSeconds);
    }
    if (!has_flag(o, "--wait")) return std::nullopt;
    return store;
}

int cmd_batch_task(const std::vector<std::string>& args) {
    if (args.size() != 2) throw UsageError("batch-task takes a batch folder and a submission number");
    const BatchStore store = BatchStore::open(args[0]);
    const nlohmann::json submission = read_submission(store.dir() + "/slurm/submit-" + args[1] + ".json");
    const char* task_env = std::getenv("SLURM_ARRAY_TASK_ID");
    if (!task_env) throw UsageError("batch-task runs inside a Slurm array task (no SLURM_ARRAY_TASK_ID)");
    const size_t task = std::strtoull(task_env, nullptr, 10);
    const std::vector<size_t> all = json_integers<size_t>(submission.at("points"));
    const size_t chunk = json_integer<size_t>(submission.at("chunk"));
    std::vector<size_t> mine;
    for (size_t i = task * chunk; i < all.size() && i < (task + 1) * chunk; ++i) {
        if (all[i] >= store.plan().points.size()) throw UsageError("submission " + args[1] + " names no point " + std::to_string(all[i]));
        if (!store.done(all[i])) mine.push_back(all[i]);
    }
    const char* cpus = std::getenv("SLURM_CPUS_PER_TASK");
    const unsigned jobs = cpus ? std::max(1u, static_cast<unsigned>(std::strtoul(cpus, nullptr, 10))) : 1;
    std::fprintf(stderr, "pfsim batch-task: task %zu runs %zu points (%u at a time)\n", task, mine.size(), jobs);
    run_points(store.plan(), mine, jobs, &store, points_progress("pfsim " + store.plan().command + " task " + std::to_string(task)));
    return 0;
}

}  // namespace pfsim

#include "cli/children.h"

#include <algorithm>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <csignal>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "base/atomic_file.h"
#include "cli/commands.h"
#include "cli/exit_status.h"

extern char** environ;

namespace pfsim {

namespace {

// Starts argv[0] (looked up on PATH unless it names a path) with stdout to
// `out` and stderr to `err`, and stdin from `in` (none: the parent's).
pid_t spawn(const std::vector<std::string>& args, const std::string& out, const std::string& err,
            const std::string& in = "") {
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    if (!in.empty()) posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, in.c_str(), O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc != 0) {
        const std::string program = args[0].substr(args[0].rfind('/') + 1);  // npos + 1 == 0
        const std::string what = args.size() > 1 ? program + " " + args[1] : program;
        throw std::runtime_error("cannot start " + what + ": " + std::strerror(rc));
    }
    return pid;
}

// The whole file (empty when it cannot be read), then removed.
std::string take_file(const std::string& path) {
    std::string text;
    read_whole_file(path, &text);
    std::remove(path.c_str());
    return text;
}

std::string make_temporary_dir() { return make_temporary_folder("pfsim"); }

}  // namespace

std::string make_temporary_folder(const std::string& name) {
    const char* tmpdir = std::getenv("TMPDIR");
    std::string path = std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + name + ".XXXXXX";
    if (!mkdtemp(path.data())) {
        throw std::runtime_error("cannot make a folder " + path + ": " + std::strerror(errno));
    }
    return path;
}

std::string self_path() {
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) throw std::runtime_error("cannot find the pfsim binary (/proc/self/exe)");
    exe[n] = '\0';
    return exe;
}

api::RunResult run_result(const ChildRun& child) {
    try {
        return api::from_json(child.summary);
    } catch (const api::BadInput& e) {
        api::RunResult r;
        r.error = e.what();
        if (child.summary.is_discarded()) {
            // What the child said on stderr, its last line without the "pfsim: " prefix.
            std::string said = child.error_output;
            while (!said.empty() && (said.back() == '\n' || said.back() == ' ')) said.pop_back();
            said = said.substr(said.rfind('\n') == std::string::npos ? 0 : said.rfind('\n') + 1);
            if (said.rfind("pfsim: ", 0) == 0) said = said.substr(7);
            r.error = said.empty() ? "the run printed no summary (exit " + std::to_string(child.status) + ")" : said;
        }
        return r;
    }
}

insight::WhatIf measured_what_if(const api::RunResult& off, const api::RunResult& advised, const api::RunResult& ideal) {
    for (const api::RunResult* r : {&off, &advised, &ideal}) {
        if (!r->ran || !r->error.empty()) return {};
    }
    return {true, off.kernel_time_ns, advised.kernel_time_ns, ideal.kernel_time_ns};
}

double comm_prefetch_wait_ns(const api::RunResult& r) {
    const nlohmann::json& sdma = r.counters.contains("sdma") ? r.counters["sdma"] : nlohmann::json::object();
    return sdma.is_object() && sdma.contains("comm_prefetch_wait") ? sdma["comm_prefetch_wait"].get<double>() / 1e3 : 0;
}

void SiteWhatIf::apply_to(api::RunRequest& request) const {
    if (kind == Kind::Around) {
        request.around_load_sites.push_back(where);
    } else if (load_site) {
        request.warm_load_sites.push_back(where);
    } else {
        (kind == Kind::Removed ? request.dropped_sites : request.free_sites).push_back(where);
    }
}

std::vector<SiteWhatIf> site_what_ifs(const insight::AdvisorReport& report) {
    std::vector<std::string> sites;
    std::vector<SiteWhatIf> out;
    for (const insight::Advice& a : report.advice) {
        if (a.where.empty() || std::find(sites.begin(), sites.end(), a.where) != sites.end()) continue;
        if (sites.size() == kMaxSiteWhatIfs) break;
        sites.push_back(a.where);
        const bool load_site = a.verdict == "prefetch" || a.verdict == "bypass";
        if (a.verdict == "bypass") {
            out.push_back({a.where, SiteWhatIf::Kind::Around, true});
        } else if (load_site) {
            out.push_back({a.where, SiteWhatIf::Kind::Resident, true});
        } else {
            out.push_back({a.where, SiteWhatIf::Kind::Removed, false});
            // A prefetch that delayed copies between dies: what its removal gives back is the question.
            if (a.verdict != "delays_comm") out.push_back({a.where, SiteWhatIf::Kind::Resident, false});
        }
    }
    return out;
}

void record_site_what_ifs(insight::AdvisorReport& report, const std::vector<SiteWhatIf>& what_ifs,
                          const std::vector<api::RunResult>& runs) {
    for (size_t i = 0; i < what_ifs.size() && i < runs.size(); ++i) {
        if (!runs[i].ran || !runs[i].error.empty()) continue;
        for (insight::Advice& a : report.advice) {
            if (a.where != what_ifs[i].where) continue;
            if (what_ifs[i].kind == SiteWhatIf::Kind::Removed) {
                a.measured = true;
                a.without_ns = runs[i].kernel_time_ns;
                if (a.verdict == "delays_comm") {
                    a.comm_measured = true;
                    a.without_comm_wait_ns = comm_prefetch_wait_ns(runs[i]);
                }
            } else if (what_ifs[i].kind == SiteWhatIf::Kind::Around) {
                a.around_measured = true;
                a.around_ns = runs[i].kernel_time_ns;
            } else {
                a.resident_measured = true;
                a.resident_ns = runs[i].kernel_time_ns;
            }
        }
    }
}

ProgramRun run_program(const std::vector<std::string>& argv) {
    const std::string dir = make_temporary_dir();
    ProgramRun r;
    try {
        const pid_t pid = spawn(argv, dir + "/out", dir + "/err");
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    } catch (const std::runtime_error& e) {
        r.err = e.what();
    }
    r.out = take_file(dir + "/out");
    const std::string err = take_file(dir + "/err");
    if (r.err.empty()) r.err = err;
    while (!r.err.empty() && (r.err.back() == '\n' || r.err.back() == ' ')) r.err.pop_back();
    rmdir(dir.c_str());
    return r;
}

namespace {
int64_t g_still_running_every_ms = 10000;

// A spec's words (RunSpec::describe), a long path by its last two parts, at
// most 200 characters.
std::string describe(const api::RunSpec& spec) {
    std::string s;
    std::istringstream words(spec.describe());
    for (std::string a; words >> a;) {
        const size_t last = a.rfind('/');
        const size_t before = last == std::string::npos || last == 0 ? std::string::npos : a.rfind('/', last - 1);
        if (a.size() > 60 && before != std::string::npos) a = "..." + a.substr(before);
        s += (s.empty() ? "" : " ") + a;
    }
    return s.size() > 200 ? s.substr(0, 197) + "..." : s;
}
}  // namespace

void set_still_running_every(int64_t ms) { g_still_running_every_ms = ms; }

namespace {

volatile sig_atomic_t g_interrupted = 0;  // the signal that interrupts run_children, 0: none

// While it lives, SIGINT, SIGTERM and SIGHUP only set g_interrupted: run_children
// then stops its children and removes its folder before the signal takes effect
// (finish()).
class Interruptible {
public:
    Interruptible() {
        g_interrupted = 0;
        struct sigaction sa {};
        sa.sa_handler = [](int sig) { g_interrupted = sig; };
        sigemptyset(&sa.sa_mask);
        for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &sa, &kept_[i]);
    }
    ~Interruptible() {
        for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &kept_[i], nullptr);
    }
    // After cleaning up: the interrupting signal, with the action it had before.
    void finish() {
        const int sig = g_interrupted;
        if (!sig) return;
        for (size_t i = 0; i < kSignals.size(); ++i) sigaction(kSignals[i], &kept_[i], nullptr);
        raise(sig);
        throw std::runtime_error(std::string("interrupted by signal ") + std::to_string(sig));  // the signal is ignored
    }

private:
    static constexpr std::array<int, 3> kSignals = {SIGINT, SIGTERM, SIGHUP};
    std::array<struct sigaction, 3> kept_{};
};

// Stops every child in `running` (SIGTERM, then waits for it).
void stop_children(const std::map<pid_t, size_t>& running) {
    for (const auto& [pid, index] : running) kill(pid, SIGTERM);
    for (const auto& [pid, index] : running) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

}  // namespace

std::vector<ChildRun> run_children(const std::vector<api::RunSpec>& runs, unsigned jobs,
                                   const std::function<void(size_t, size_t)>& progress,
                                   const std::function<void(size_t, const ChildRun&)>& finished) {
    const std::string exe = self_path();
    // Children side by side fill the cores already: each keeps its tile arithmetic on its
    // own thread (docs/configuration.md#tile-threads) unless the user chose otherwise.
    const char* threads = std::getenv("PFSIM_TILE_THREADS");
    if (std::min<size_t>(jobs, runs.size()) > 1 && (!threads || !*threads)) setenv("PFSIM_TILE_THREADS", "1", 1);
    Interruptible interruptible;
    const std::string dir = make_temporary_dir();
    std::vector<ChildRun> results(runs.size());
    std::map<pid_t, size_t> running;
    // Interrupted, or a child that cannot be started: no child goes on, no file stays.
    struct Cleanup {
        const std::string& dir;
        std::map<pid_t, size_t>& running;
        ~Cleanup() {
            stop_children(running);
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
        }
    } cleanup{dir, running};
    std::map<pid_t, std::chrono::steady_clock::time_point> started;
    size_t next = 0, done = 0;
    const auto every = std::chrono::milliseconds(g_still_running_every_ms);
    auto next_report = std::chrono::steady_clock::now() + every;
    auto out_path = [&](size_t i) { return dir + "/" + std::to_string(i) + ".json"; };
    auto err_path = [&](size_t i) { return dir + "/" + std::to_string(i) + ".err"; };
    auto spec_path = [&](size_t i) { return dir + "/" + std::to_string(i) + ".spec"; };
    while (done < runs.size()) {
        if (g_interrupted) {
            stop_children(running);
            running.clear();
            std::error_code ec;
            std::filesystem::remove_all(dir, ec);
            interruptible.finish();
        }
        while (next < runs.size() && running.size() < std::max(1u, jobs)) {
            write_atomically(spec_path(next), api::to_json(runs[next]).dump() + "\n");
            const pid_t child = spawn({exe, "run-request"}, out_path(next), err_path(next), spec_path(next));
            running[child] = next;
            started[child] = std::chrono::steady_clock::now();
            ++next;
        }
        int status = 0;
        pid_t pid = 0;
        while ((pid = waitpid(-1, &status, WNOHANG)) == 0 && !g_interrupted) {
            usleep(10000);
            if (every.count() <= 0) continue;
            const auto now = std::chrono::steady_clock::now();
            if (now < next_report) continue;
            for (const auto& [p, k] : running) {
                if (now - started[p] < every) continue;
                const double ran = std::chrono::duration<double>(now - started[p]).count();
                std::fprintf(stderr, "pfsim: still running after %.1f s: %s (%zu of %zu runs done)\n", ran,
                             describe(runs[k]).c_str(), done, runs.size());
            }
            next_report = now + every;
        }
        auto it = running.find(pid);
        if (pid < 0 || it == running.end()) continue;
        const size_t i = it->second;
        running.erase(it);
        started.erase(pid);
        results[i].status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
        results[i].summary = nlohmann::json::parse(take_file(out_path(i)), nullptr, false);
        results[i].error_output = take_file(err_path(i));
        std::remove(spec_path(i).c_str());
        ++done;
        if (finished) finished(i, results[i]);
        if (progress) progress(done, runs.size());
    }
    rmdir(dir.c_str());
    return results;
}

std::vector<ChildRun> run_in_process(const std::vector<api::RunSpec>& runs,
                                     const std::function<void(size_t, size_t)>& progress,
                                     const std::function<void(size_t, const ChildRun&)>& finished) {
    std::vector<ChildRun> results(runs.size());
    for (size_t i = 0; i < runs.size(); ++i) {
        std::ostringstream err;
        results[i].summary = nlohmann::json(nlohmann::json::value_t::discarded);  // as a child that printed none
        results[i].status = run_guarded([&] { return run_spec_here(runs[i], &results[i].summary); }, err);
        results[i].error_output = err.str();
        if (finished) finished(i, results[i]);
        if (progress) progress(i + 1, runs.size());
    }
    return results;
}

}  // namespace pfsim

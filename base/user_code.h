// Users' code -- kernels, orchestrations and goldens: C++ compiled at run time
// and loaded into pfsim's own process -- run under guard, so that what it does
// wrong ends in a report naming it instead of a dead or hung pfsim.
//
// Why in-process with signal handling rather than a child process
// (docs/architecture.md, "Users' code"): a kernel's every GM access and API call
// is a call into the simulated core on the same SystemC coroutine; putting the
// kernel in another process would put a process switch under each of them.
//
// Contract of run(): `call` runs on the calling thread (and SystemC process). It
// ends early, and run() returns what ended it, when it
//   - faults: SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT (abort, a failed assert,
//     std::terminate), stack overflow included (the handler runs on an
//     alternate stack);
//   - is still running when the host-time limit (TimeLimit) has passed: stopped
//     where it runs in the user's own code or waits in a system call (a loop in
//     pfsim's code is stopped by the core's own check, time_limit_passed());
//   - calls exit, _exit, _Exit, quick_exit or fork (users' objects are linked
//     with --wrap for them, kLinkFlags).
// The user's frames are abandoned (siglongjmp): no destructor of theirs runs, and
// the caller must treat the state its code touched as lost (pfsim ends the run).
// A signal outside any guarded call keeps its default action. C++ exceptions are
// not caught here: they leave `call` as usual.
#pragma once

#include <csignal>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace pfsim::user_code {

struct Escape {
    enum class Kind { None, Signal, TimeLimit, Exit, Fork };
    Kind kind = Kind::None;
    int signal = 0;          // Signal
    uintptr_t address = 0;   // Signal: the faulting address (SIGSEGV, SIGBUS, SIGFPE, SIGILL)
    bool stack_overflow = false;
    int status = 0;          // Exit: the status passed
    std::vector<void*> frames;  // the user's stack at the escape, innermost first
    explicit operator bool() const { return kind != Kind::None; }
    // "SIGSEGV (invalid memory access at 0x0)", "called exit(0)", ...
    std::string what() const;
};

// Runs `call` guarded; `label` (kept by the caller while it runs) names the
// code in the message of a run stopped by force (see TimeLimit).
Escape run(const char* label, const std::function<void()>& call);

// The host-time limit of what runs while it lives (seconds; 0: none), counted
// from the first guarded call it sees (compiling users' sources does not
// count): once passed, a guarded call in progress or started later ends with
// Kind::TimeLimit. One at a time. A guarded call that can be stopped neither in
// its own code nor by time_limit_passed() checks within 5 s more ends the
// process: its label on stderr, exit 1.
class TimeLimit {
public:
    explicit TimeLimit(double seconds, std::string what);
    ~TimeLimit();
    TimeLimit(const TimeLimit&) = delete;
    TimeLimit& operator=(const TimeLimit&) = delete;
};
bool time_limit_passed();
// The signal that stops a guarded call at the limit, sent to the thread that runs
// guarded calls. Code that must not be left midway by a siglongjmp (another thread
// still using its stack: pfsim::on_two_threads) blocks it for a while; a stop due
// meanwhile comes when it is unblocked, by the next tick or the core's own check.
constexpr int kTimeLimitSignal = SIGALRM;
// "the host-time limit (orch.host_time_limit = 2 s)": what the active TimeLimit was given.
std::string time_limit_text();

// Inside a catch block: "an exception of type int" (the demangled type of
// the exception being handled).
std::string current_exception_type();

// [begin, end) holds the code of a user's object (its executable segments).
void add_code_range(uintptr_t begin, uintptr_t end);
// Forgets every range: the users' objects were unloaded. Only while no users'
// code runs.
void clear_code_ranges();

// The linker flags of users' objects that route exit and fork to the guard.
extern const std::vector<std::string> kLinkFlags;

// Standard output (descriptor 1 and C's stdout) into a memory file while it
// lives: what users' code prints never reaches pfsim's own stdout (a --json
// document). text() ends the capture and returns what was printed (at most
// 64 KiB of it, then a line saying how much more).
class StdoutCapture {
public:
    StdoutCapture();
    ~StdoutCapture();
    StdoutCapture(const StdoutCapture&) = delete;
    StdoutCapture& operator=(const StdoutCapture&) = delete;
    std::string text();

private:
    int saved_ = -1, file_ = -1;
};

}  // namespace pfsim::user_code

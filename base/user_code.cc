#include "base/user_code.h"

#include <execinfo.h>
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cxxabi.h>
#include <typeinfo>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <mutex>
#include <stdexcept>

#include <systemc>

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

namespace pfsim::user_code {

namespace {

// A guarded call in progress: where to return to, and why it ended.
struct Frame {
    sigjmp_buf env;
    const void* context;  // the SystemC process it runs in (null: none, sc_main's own stack)
    const char* label;
    Escape escape;
};

constexpr int kFaults[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// Guarded calls in progress, one per SystemC process at most (kernels on the
// cores' coroutines, an orchestration or golden on sc_main's stack). Read by the
// signal handlers: fixed slots, written only with the signals' thread running
// normal code.
std::array<Frame*, 512> g_frames{};
size_t g_frames_used = 0;  // slots [0, g_frames_used) are all that may hold a frame: what frame_of scans
pid_t g_thread = 0;  // the thread that runs users' code (the simulation's)

std::array<std::pair<uintptr_t, uintptr_t>, 1024> g_code{};
std::atomic<size_t> g_code_count{0};

volatile sig_atomic_t g_time_passed = 0;
volatile sig_atomic_t g_ticks_missed = 0;
std::string g_limit_text;
timer_t g_timer{};
double g_limit_seconds = 0;  // a TimeLimit not yet armed
bool g_timer_armed = false;

void arm_time_limit();  // below TimeLimit

const void* current_context() { return sc_core::sc_get_current_process_b(); }

Frame* frame_of(const void* context) {
    for (size_t i = 0; i < g_frames_used; ++i) {
        if (g_frames[i] && g_frames[i]->context == context) return g_frames[i];
    }
    return nullptr;
}

bool in_user_code(uintptr_t pc) {
    const size_t n = g_code_count.load(std::memory_order_acquire);
    for (size_t i = 0; i < n; ++i) {
        if (pc >= g_code[i].first && pc < g_code[i].second) return true;
    }
    return false;
}

uintptr_t pc_of(void* uc) { return static_cast<uintptr_t>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RIP]); }
uintptr_t sp_of(void* uc) { return static_cast<uintptr_t>(static_cast<ucontext_t*>(uc)->uc_mcontext.gregs[REG_RSP]); }

// Just after a `syscall` instruction: a blocking call (sleep, read) that the
// signal interrupted; leaving it holds no lock.
bool after_syscall(uintptr_t pc) {
    const auto* code = reinterpret_cast<const uint8_t*>(pc);
    return code[-2] == 0x0f && code[-1] == 0x05;
}

[[noreturn]] void escape_to(Frame* f, Escape::Kind kind, void* uc) {
    f->escape.kind = kind;
    void* frames[48];
    const int n = backtrace(frames, 48);
    f->escape.frames.clear();
    if (uc) f->escape.frames.push_back(reinterpret_cast<void*>(pc_of(uc)));
    // The handler's own frames and the signal trampoline come first; what follows is the user's stack.
    for (int i = 0; i < n; ++i) f->escape.frames.push_back(frames[i]);
    siglongjmp(f->env, 1);
}

void default_action(int sig) {
    signal(sig, SIG_DFL);
    raise(sig);  // delivered when the handler returns
}

void on_fault(int sig, siginfo_t* info, void* uc) {
    Frame* f = syscall(SYS_gettid) == g_thread ? frame_of(current_context()) : nullptr;
    if (!f || f->escape.kind != Escape::Kind::None) return default_action(sig);
    f->escape.signal = sig;
    f->escape.address = reinterpret_cast<uintptr_t>(info->si_addr);
    // A fault next to the stack pointer: the stack ran out (into its guard page).
    const uintptr_t sp = sp_of(uc), addr = f->escape.address;
    f->escape.stack_overflow = sig == SIGSEGV && addr + 65536 > sp && addr < sp + 65536;
    escape_to(f, Escape::Kind::Signal, uc);
}

void on_timer(int, siginfo_t*, void* uc) {
    g_time_passed = 1;
    Frame* f = frame_of(current_context());
    if (!f || f->escape.kind != Escape::Kind::None) return;
    const uintptr_t pc = pc_of(uc);
    if (in_user_code(pc) || after_syscall(pc)) escape_to(f, Escape::Kind::TimeLimit, uc);
    // In pfsim's or a library's code: the next tick, or the core's next check, stops it.
    if (++g_ticks_missed < 500) return;
    const char* head = "pfsim: ";
    const char* tail = ": still running past the host-time limit and cannot be stopped where it runs; ending pfsim\n";
    (void)!write(2, head, strlen(head));
    (void)!write(2, f->label, strlen(f->label));
    (void)!write(2, tail, strlen(tail));
    _exit(1);
}

void install() {
    static std::once_flag once;
    std::call_once(once, [] {
        g_thread = static_cast<pid_t>(syscall(SYS_gettid));
        // The handlers' own stack: a stack overflow leaves none to run on.
        constexpr size_t kAltStack = 256 << 10;
        void* alt = mmap(nullptr, kAltStack, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (alt == MAP_FAILED) throw std::runtime_error("cannot map the signal stack");
        stack_t ss{};
        ss.ss_sp = alt;
        ss.ss_size = kAltStack;
        if (sigaltstack(&ss, nullptr) != 0) throw std::runtime_error("cannot set the signal stack");
        void* warm[4];
        backtrace(warm, 4);  // loads the unwinder now, not inside a handler
        struct sigaction sa {};
        sa.sa_sigaction = on_fault;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
        sigemptyset(&sa.sa_mask);
        for (int sig : kFaults) sigaction(sig, &sa, nullptr);
        sa.sa_sigaction = on_timer;
        sa.sa_flags = SA_SIGINFO | SA_ONSTACK | SA_RESTART;
        sigaction(kTimeLimitSignal, &sa, nullptr);
    });
}

const char* signal_name(int sig) {
    switch (sig) {
        case SIGSEGV: return "SIGSEGV";
        case SIGBUS: return "SIGBUS";
        case SIGFPE: return "SIGFPE";
        case SIGILL: return "SIGILL";
        case SIGABRT: return "SIGABRT";
    }
    return "a signal";
}

std::string hex(uintptr_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

// The call, and where its escapes return to (a function of its own: no local
// of the caller lives across the siglongjmp).
__attribute__((noinline)) void enter(Frame& frame, const std::function<void()>& call) {
    if (sigsetjmp(frame.env, 1) == 0) call();
}

}  // namespace

std::string Escape::what() const {
    switch (kind) {
        case Kind::None: return "";
        case Kind::Signal:
            if (stack_overflow) return std::string(signal_name(signal)) + " (stack overflow)";
            switch (signal) {
                case SIGSEGV: return "SIGSEGV (invalid memory access at " + hex(address) + ")";
                case SIGBUS: return "SIGBUS (bus error at " + hex(address) + ")";
                case SIGFPE: return "SIGFPE (arithmetic fault: an integer division by zero or overflow)";
                case SIGILL: return "SIGILL (illegal instruction at " + hex(address) + ")";
                case SIGABRT: return "SIGABRT (abort(): a failed assert, std::terminate or an uncaught exception)";
            }
            return signal_name(signal);
        case Kind::TimeLimit: return "still running at " + time_limit_text();
        case Kind::Exit: return "called exit(" + std::to_string(status) + "), which would end pfsim";
        case Kind::Fork: return "called fork(), which pfsim does not allow in users' code";
    }
    return "";
}

Escape run(const char* label, const std::function<void()>& call) {
    install();
    Frame frame;
    frame.context = current_context();
    frame.label = label;
    if (frame_of(frame.context)) throw std::logic_error("pfsim: a guarded call inside another one");
    size_t slot = 0;
    while (slot < g_frames.size() && g_frames[slot]) ++slot;
    if (slot == g_frames.size()) throw std::logic_error("pfsim: too many guarded calls at once");
    if (g_time_passed) {
        frame.escape.kind = Escape::Kind::TimeLimit;
        return frame.escape;
    }
    if (g_limit_seconds > 0) arm_time_limit();
    if (slot >= g_frames_used) g_frames_used = slot + 1;
    std::atomic_signal_fence(std::memory_order_seq_cst);  // a handler that finds the frame scans to it
    g_frames[slot] = &frame;
    enter(frame, call);
    g_frames[slot] = nullptr;
    while (g_frames_used > 0 && !g_frames[g_frames_used - 1]) --g_frames_used;
    return frame.escape;
}

TimeLimit::TimeLimit(double seconds, std::string what) {
    install();
    g_time_passed = 0;
    g_ticks_missed = 0;
    g_limit_text = std::move(what);
    g_limit_seconds = seconds;  // armed at the first guarded call
}

namespace {

void arm_time_limit() {
    const double seconds = g_limit_seconds;
    g_limit_seconds = 0;
    if (seconds <= 0) return;
    sigevent ev{};
    ev.sigev_notify = SIGEV_THREAD_ID;
    ev.sigev_signo = kTimeLimitSignal;
    ev.sigev_notify_thread_id = g_thread;
    if (timer_create(CLOCK_MONOTONIC, &ev, &g_timer) != 0) throw std::runtime_error("cannot create the host-time timer");
    itimerspec spec{};
    spec.it_value.tv_sec = static_cast<time_t>(seconds);
    spec.it_value.tv_nsec = static_cast<long>((seconds - static_cast<double>(spec.it_value.tv_sec)) * 1e9);
    if (spec.it_value.tv_sec == 0 && spec.it_value.tv_nsec == 0) spec.it_value.tv_nsec = 1;
    spec.it_interval.tv_nsec = 10000000;  // then every 10 ms, until what runs is stopped
    timer_settime(g_timer, 0, &spec, nullptr);
    g_timer_armed = true;
}

}  // namespace

TimeLimit::~TimeLimit() {
    if (g_timer_armed) timer_delete(g_timer);
    g_timer_armed = false;
    g_limit_seconds = 0;
    g_time_passed = 0;
}

std::string current_exception_type() {
    const std::type_info* t = abi::__cxa_current_exception_type();
    if (!t) return "an exception";
    int status = 0;
    char* name = abi::__cxa_demangle(t->name(), nullptr, nullptr, &status);
    const std::string out = "an exception of type " + std::string(status == 0 && name ? name : t->name());
    std::free(name);
    return out;
}

bool time_limit_passed() { return g_time_passed != 0; }

std::string time_limit_text() { return g_limit_text; }

void add_code_range(uintptr_t begin, uintptr_t end) {
    const size_t n = g_code_count.load(std::memory_order_relaxed);
    if (n == g_code.size()) return;  // beyond 1024 segments: stopped at its next check instead
    g_code[n] = {begin, end};
    g_code_count.store(n + 1, std::memory_order_release);
}

void clear_code_ranges() { g_code_count.store(0, std::memory_order_release); }

const std::vector<std::string> kLinkFlags = {"-Wl,--wrap=exit,--wrap=_exit,--wrap=_Exit,--wrap=quick_exit,--wrap=fork"};

StdoutCapture::StdoutCapture() {
    std::cout.flush();
    std::fflush(stdout);
    file_ = memfd_create("pfsim-user-stdout", MFD_CLOEXEC);
    saved_ = dup(STDOUT_FILENO);
    if (file_ < 0 || saved_ < 0 || dup2(file_, STDOUT_FILENO) < 0) {
        throw std::runtime_error(std::string("cannot capture standard output: ") + std::strerror(errno));
    }
}

StdoutCapture::~StdoutCapture() { text(); }

std::string StdoutCapture::text() {
    if (saved_ < 0) return "";
    std::cout.flush();
    std::fflush(stdout);
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
    saved_ = -1;
    constexpr size_t kShown = 64 << 10;
    const off_t size = lseek(file_, 0, SEEK_END);
    std::string out(static_cast<size_t>(std::max<off_t>(0, std::min<off_t>(size, kShown))), '\0');
    if (!out.empty() && pread(file_, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) out.clear();
    close(file_);
    file_ = -1;
    if (size > static_cast<off_t>(kShown)) {
        out += "\n(" + std::to_string(size - static_cast<off_t>(kShown)) + " more bytes not shown)\n";
    }
    return out;
}

}  // namespace pfsim::user_code

// Users' objects are linked with --wrap for these (kLinkFlags): inside a guarded
// call they end the call; elsewhere they do what libc's do.
extern "C" {

namespace {

[[noreturn]] void escape_by_call(pfsim::user_code::Escape::Kind kind, int status) {
    using namespace pfsim::user_code;
    Frame* f = frame_of(current_context());
    if (!f) {
        if (kind == Escape::Kind::Fork) std::abort();  // unreachable: fork returns below
        std::exit(status);
    }
    f->escape.kind = kind;
    f->escape.status = status;
    void* frames[48];
    const int n = backtrace(frames, 48);
    f->escape.frames.assign(frames, frames + n);
    siglongjmp(f->env, 1);
}

}  // namespace

__attribute__((visibility("default"), used)) void __wrap_exit(int status) {
    escape_by_call(pfsim::user_code::Escape::Kind::Exit, status);
}
__attribute__((visibility("default"), used)) void __wrap__exit(int status) {
    escape_by_call(pfsim::user_code::Escape::Kind::Exit, status);
}
__attribute__((visibility("default"), used)) void __wrap__Exit(int status) {
    escape_by_call(pfsim::user_code::Escape::Kind::Exit, status);
}
__attribute__((visibility("default"), used)) void __wrap_quick_exit(int status) {
    escape_by_call(pfsim::user_code::Escape::Kind::Exit, status);
}
__attribute__((visibility("default"), used)) pid_t __wrap_fork() {
    if (!pfsim::user_code::frame_of(pfsim::user_code::current_context())) return fork();
    escape_by_call(pfsim::user_code::Escape::Kind::Fork, 0);
}

}  // extern "C"

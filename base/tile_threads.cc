#include "base/tile_threads.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

#include <pthread.h>

#include "base/user_code.h"

namespace pfsim {
namespace {

int threads_from_environment() {
    const char* value = std::getenv("PFSIM_TILE_THREADS");
    if (!value || !*value) return std::thread::hardware_concurrency() >= 2 ? 2 : 1;
    const std::string v = value;
    if (v == "1" || v == "2") return v[0] - '0';
    throw std::runtime_error("PFSIM_TILE_THREADS='" + v +
                             "': tile arithmetic's host threads are 1 (the simulation's own) or 2 (and one helper)");
}

void pause() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

// How long an idle helper spins before it blocks (a kernel's products often come
// a few microseconds apart), and how many pieces a job is cut into at most (the
// calling thread never waits for a helper that has not joined; at the end it
// waits for the helper's last piece at most).
constexpr auto kSpin = std::chrono::microseconds(10);
constexpr int kMaxPieces = 8;

// The helper thread and its one job. Kernels run on one host thread (SystemC's
// processes are coroutines of it), so jobs come one at a time.
class Helper {
public:
    ~Helper() {
        if (!thread_.joinable()) return;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            stopping_.store(true);
        }
        wake_.notify_one();
        thread_.join();
    }

    void run(PieceWork work, void* context, int items) {
        if (!thread_.joinable()) start();
        // Not left midway by the host-time limit's stop: the helper may be using
        // `context`, which lives on the caller's stack.
        sigset_t stop, old;
        sigemptyset(&stop);
        sigaddset(&stop, user_code::kTimeLimitSignal);
        pthread_sigmask(SIG_BLOCK, &stop, &old);
        share(work, context, items);
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }

private:
    void share(PieceWork work, void* context, int items) {
        work_ = work, context_ = context, items_ = items;
        pieces_ = items < kMaxPieces ? items : kMaxPieces;
        next_.store(0, std::memory_order_relaxed);
        left_.store(false, std::memory_order_relaxed);
        open_.store(true, std::memory_order_release);
        {
            std::lock_guard<std::mutex> lock(mutex_);
            if (sleeping_) wake_.notify_one();
        }
        take_pieces(0);
        // Closed before the helper joined: it never will. Else wait for its last piece.
        if (open_.exchange(false, std::memory_order_acq_rel)) return;
        for (int spins = 0; !left_.load(std::memory_order_acquire); ++spins) {
            if (spins < 4096) pause();
            else std::this_thread::yield();
        }
    }

    void start() {
        // The helper takes no signal: pfsim's guard of users' code handles its
        // signals on the simulation's thread.
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &old);
        thread_ = std::thread([this] { loop(); });
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
    }

    // Pieces [i * items / pieces, (i + 1) * items / pieces), i taken in turn by either thread.
    void take_pieces(int thread) {
        for (;;) {
            const int i = next_.fetch_add(1, std::memory_order_relaxed);
            if (i >= pieces_) return;
            const long items = items_, pieces = pieces_;
            work_(context_, thread, static_cast<int>(i * items / pieces), static_cast<int>((i + 1) * items / pieces));
        }
    }

    bool join() { return open_.load(std::memory_order_relaxed) && open_.exchange(false, std::memory_order_acq_rel); }

    void loop() {
        for (;;) {
            const auto until = std::chrono::steady_clock::now() + kSpin;
            bool joined = false;
            for (int spins = 0; !(joined = join()); ++spins) {
                if (stopping_.load(std::memory_order_relaxed)) return;
                pause();
                if (spins % 64 == 63 && std::chrono::steady_clock::now() > until) break;
            }
            if (!joined) {
                std::unique_lock<std::mutex> lock(mutex_);
                sleeping_ = true;
                wake_.wait(lock, [this] { return stopping_.load() || open_.load(std::memory_order_relaxed); });
                sleeping_ = false;
                if (stopping_.load()) return;
                lock.unlock();
                if (!join()) continue;  // the caller closed it first
            }
            take_pieces(1);
            left_.store(true, std::memory_order_release);
        }
    }

    std::thread thread_;
    std::mutex mutex_;
    std::condition_variable wake_;
    bool sleeping_ = false;              // under mutex_
    std::atomic<bool> stopping_{false};  // set under mutex_
    std::atomic<bool> open_{false};      // a job the helper may join
    std::atomic<bool> left_{false};      // the helper, having joined, took its last piece
    // The job, written before open_ is set; the helper reads it only after joining.
    PieceWork work_ = nullptr;
    void* context_ = nullptr;
    int items_ = 0, pieces_ = 0;
    std::atomic<int> next_{0};  // the next piece to take
};

}  // namespace

int tile_threads() {
    static const int threads = threads_from_environment();
    return threads;
}

void run_on_tile_threads(PieceWork work, void* context, int items) {
    if (items <= 0) return;
    if (items == 1 || tile_threads() < 2) return work(context, 0, 0, items);
    static Helper helper;
    helper.run(work, context, items);
}

}  // namespace pfsim

// Which prefetches stood ahead of communication copies in an SDMA ring, on a
// run of several dies (the advisor's communication advice, docs/advisor.md):
// every prefetch post and every copy post (TGET_ASYNC, TPUT_ASYNC) with its
// call site, its task and its ring (the die, the ring's GM base). The engine
// runs a ring's requests in order, so a copy posted on a ring after a
// prefetch waits for it (what sdma.comm_prefetch_wait counts).
//
// Contract: construct it before the run and call finish() after; while it
// lives it observes the kernels of every die of `dies` (which must outlive
// it). It changes nothing the run computes or times.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "insight/call_log.h"
#include "runtime/platform/sim/sim_dies.h"
#include "runtime/prefetch.h"

namespace pfsim::insight {

class CommRingLog : public rt::PrefetchObserver {
public:
    explicit CommRingLog(SimDies& dies);
    ~CommRingLog() override;
    CommRingLog(const CommRingLog&) = delete;
    CommRingLog& operator=(const CommRingLog&) = delete;

    struct CopyPost {
        std::string instruction;  // TGET_ASYNC, TPUT_ASYNC
        Site site;
    };
    // A prefetch call site and the copies posted after one of its posts on a
    // ring it posted on.
    struct PrefetchSite {
        std::string where;               // "kernel_warm.cpp:27" ("" unknown)
        std::vector<std::string> tasks;  // "task 1 (aiv, func 1) block 0 on rank0.aiv0", by first post
        uint64_t posts = 0, bytes = 0;
        std::vector<CopyPost> copies_behind;  // in posting order
    };
    // The prefetch sites by first post; times count from `start`.
    std::vector<PrefetchSite> finish(Tick start);

    // rt::PrefetchObserver
    void posted(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                uint64_t since_ps) override;
    void copy_posted(const rt::AsyncSession& s, const char* instruction, uint64_t dst, uint64_t src,
                     uint64_t bytes) override;

private:
    struct Post {
        std::string instruction;  // empty: a prefetch
        size_t call = 0;
        std::string die;          // the posting core's die ("rank0")
        uint64_t ring = 0;        // the ring's GM base on that die
        uint64_t bytes = 0;
    };
    void record(const rt::AsyncSession& s, const char* instruction, uint64_t bytes);
    void detach();  // from every die, once

    std::vector<rt::KernelSide*> dies_;

    CallLog calls_;
    std::vector<Post> posts_;
    bool finished_ = false;
};

}  // namespace pfsim::insight

// A shared resource's capacity over time, in buckets. Work reserved at time t
// fills the free capacity of t's bucket and spills into later ones, so requests
// that arrive out of time order (cores run ahead of each other by up to a
// quantum) do not queue behind reservations made for a later time, as they
// would with a single "busy until" time.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "base/zero_buffer.h"
#include "model/common/tick.h"

namespace pfsim {

class Calendar {
public:
    static constexpr unsigned kBucketShift = 16;  // 65.536 ns buckets
    static constexpr Tick kBucket = Tick{1} << kBucketShift;

    // A bucket's work is counted in 32 bits (8-byte buckets: the calendars of a
    // random replay are its largest host-cache footprint after the L2's arrays).
    static constexpr uint64_t kMaxServers = (uint64_t{1} << (32 - kBucketShift)) - 1;
    // Reservations are exact below this time (2^60 ps, about 13 days).
    static constexpr Tick kTimeLimit = Tick{1} << 60;

    // `servers` units of work can proceed at once (1 for a channel or port, N for
    // a pool of N miss-status registers), at most kMaxServers, else
    // std::invalid_argument. 2^window_log2 buckets are remembered.
    explicit Calendar(uint64_t servers = 1, unsigned window_log2 = 12)
        : servers_(servers), capacity_(kBucket * servers), buckets_(size_t{1} << window_log2),
          mask_((uint64_t{1} << window_log2) - 1), window_log2_(window_log2),
          servers_log2_(servers && (servers & (servers - 1)) == 0 ? __builtin_ctzll(servers) : -1) {
        if (servers == 0 || servers > kMaxServers) {
            throw std::invalid_argument("a calendar has 1 to " + std::to_string(kMaxServers) + " servers");
        }
    }

    // Reserves `work` (resource-picoseconds, run on one server) from time `t`,
    // below kTimeLimit (else std::overflow_error); returns when it is done.
    Tick reserve(Tick t, Tick work) {
        if (t >= kTimeLimit) throw std::overflow_error("pfsim: simulated time past 2^60 ps");
        uint64_t b = t >> kBucketShift;
        if (b > latest_ && work > 0 && work < std::min(capacity_, (((b + 1) << kBucketShift) - t) * servers_)) {
            // The common case, the loop below in short: a bucket later than any
            // handed out (empty, as are all after it) takes the whole work.
            // No bucket becomes full, so first_free_ is advanced by the next
            // reservation that needs it (reading the window's oldest bucket here
            // would be a host cache miss on nearly every call).
            slot(b) = static_cast<uint32_t>(work);
            return t + work;
        }
        if (b >= first_free_ && b <= latest_ && work > 0) {
            // The common case of a burst, the loop below in short: a bucket
            // handed out before (first_free_ >= base_) and not among the full
            // ones skipped takes the whole work without filling up.
            uint32_t& used = slot(b);
            if (used + work < capacity_ && work <= (((b + 1) << kBucketShift) - t) * servers_) {
                used += static_cast<uint32_t>(work);
                return std::max(t + work, (b << kBucketShift) + per_server(used));
            }
        }
        if (b < base_) {
            b = base_;  // older than anything remembered: as early as possible
            t = b << kBucketShift;
        }
        advance_first_free();
        if (b < first_free_) {  // every bucket before first_free_ is full
            b = first_free_;
            t = b << kBucketShift;
        }
        Tick remaining = work;
        Tick done = t + work;
        for (bool first = true; remaining > 0; first = false, ++b) {
            uint32_t& used = slot(b);
            Tick avail = capacity_ - std::min<Tick>(used, capacity_);
            if (first) avail = std::min<Tick>(avail, (((b + 1) << kBucketShift) - t) * servers_);
            const Tick take = std::min(avail, remaining);
            used += static_cast<uint32_t>(take);
            if (used >= capacity_) latest_full_ = std::max(latest_full_, b);
            remaining -= take;
            if (remaining == 0) done = std::max(done, (b << kBucketShift) + per_server(used));
        }
        advance_first_free();
        return done;
    }

private:
    // A bucket's work spread over the servers: used / servers_, by a shift where
    // servers_ is a power of two (a 64-bit division was a sixth of reserve's time
    // on the 2048 miss registers), else in 32 bits (used and servers_ fit).
    uint64_t per_server(uint32_t used) const {
        return servers_log2_ >= 0 ? used >> servers_log2_ : used / static_cast<uint32_t>(servers_);
    }

    void advance_first_free() {
        while (first_free_ <= latest_full_ && first_free_ < base_ + mask_ && slot(first_free_) >= capacity_) {
            ++first_free_;
        }
    }

    // The work reserved in bucket b. The window [base_, base_ + mask_] moves
    // forward to hold b; each entry remembers which bucket it holds, so one that
    // last held a bucket now before the window reads as empty and nothing is
    // cleared as the window moves (time jumps far between reservations).
    // A bucket later than any handed out before holds nothing yet: it is
    // written without being read first (a host cache miss that need not stall).
    uint32_t& slot(uint64_t b) {
        if (b > base_ + mask_) base_ = b - mask_;
        first_free_ = std::max(first_free_, base_);
        Bucket& e = buckets_[b & mask_];
        const uint32_t round = static_cast<uint32_t>(b >> window_log2_);
        if (b > latest_ || e.round != round) e = {round, 0};
        latest_ = std::max(latest_, b);
        return e.used;
    }

    struct Bucket {
        uint32_t round;  // the bucket whose work `used` is, as b >> window_log2 (all start as bucket 0, empty)
        uint32_t used;
    };

    uint64_t servers_;
    Tick capacity_;
    ZeroArray<Bucket> buckets_;
    uint64_t mask_;
    unsigned window_log2_;
    int servers_log2_;  // log2(servers_) where it is a power of two, else -1
    uint64_t base_ = 0;
    uint64_t first_free_ = 0;  // buckets [base_, first_free_) are full
    uint64_t latest_ = 0;      // the latest bucket slot() handed out (no entry holds a later one)
    uint64_t latest_full_ = 0;  // the latest bucket filled to capacity (no later one is full)
};

}  // namespace pfsim

// Least recently used: every touch and insert makes the way the most recent;
// the victim is the least recent. `lru_prefetch_lru` is the same but for a
// prefetch fill, which enters as the least recent way of its set (the
// insertion Feedback-Directed Prefetching switches to when prefetches pollute):
// a prefetched line that no core touches is the next one replaced.
#include <memory>
#include <vector>

#include "model/l2/replacement.h"

namespace pfsim {

namespace {

class Lru final : public ReplacementPolicy {
public:
    Lru(uint64_t sets, uint64_t ways, bool prefetch_at_lru_end)
        : ways_(ways), stamp_(sets * ways, 0), prefetch_at_lru_end_(prefetch_at_lru_end) {}

    void touch(uint64_t set, unsigned way, Fill) override { stamp_[set * ways_ + way] = kMid + ++recent_; }

    void insert(uint64_t set, unsigned way, Fill by) override {
        // Below kMid, each later one lower: older than every way of the set, the earlier such ones included.
        stamp_[set * ways_ + way] = by == Fill::Prefetch && prefetch_at_lru_end_ ? kMid - ++oldest_ : kMid + ++recent_;
    }

    unsigned victim(uint64_t set) override {
        const uint64_t base = set * ways_;
        uint64_t best = 0;
        for (uint64_t w = 1; w < ways_; ++w) {
            if (stamp_[base + w] < stamp_[base + best]) best = w;
        }
        return static_cast<unsigned>(best);
    }

private:
    static constexpr uint64_t kMid = uint64_t{1} << 63;
    uint64_t ways_;
    std::vector<uint64_t> stamp_;  // per slot: its place in the set's order (the least is least recent)
    uint64_t recent_ = 0, oldest_ = 0;
    bool prefetch_at_lru_end_;
};

}  // namespace

std::unique_ptr<ReplacementPolicy> make_lru(uint64_t sets, uint64_t ways) {
    return std::make_unique<Lru>(sets, ways, false);
}

std::unique_ptr<ReplacementPolicy> make_lru_prefetch_lru(uint64_t sets, uint64_t ways) {
    return std::make_unique<Lru>(sets, ways, true);
}

}  // namespace pfsim

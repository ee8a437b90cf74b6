// Least recently used: every touch and insert makes the way the most recent;
// the victim is the least recent. `lru_prefetch_lru` is the same but for a
// prefetch fill, which enters as the least recent way of its set (the
// insertion Feedback-Directed Prefetching switches to when prefetches pollute):
// a prefetched line that no core touches is the next one replaced.
//
// Each way holds its place in its set's order, 0 the most recent; a set's
// places sit together (up to 16 ways: 16 bytes, updated at once), so an access
// reads one host cache line of them. Untouched ways start in way order, way 0
// the least recent.
#include <cstdint>
#include <memory>
#include <vector>

#include "model/l2/lanes16.h"
#include "model/l2/replacement.h"

namespace pfsim {

namespace {

template <class Place>
class Lru final : public ReplacementPolicy {
public:
    Lru(uint64_t sets, uint64_t ways, bool prefetch_at_lru_end)
        : ways_(ways), stride_(lanes16::stride(ways)), way_bits_(lanes16::way_bits(ways)),
          place_(sets * stride_), prefetch_at_lru_end_(prefetch_at_lru_end) {
        for (uint64_t set = 0; set < sets; ++set) {
            for (uint64_t w = 0; w < ways; ++w) place_[set * stride_ + w] = static_cast<Place>(ways - 1 - w);
        }
        for (uint64_t w = 0; w < lanes16::kLanes; ++w) way_mask_[w] = w < ways ? 0xff : 0;
    }

    void touch(uint64_t set, unsigned way, Fill) override { make_most_recent(set, way); }

    void insert(uint64_t set, unsigned way, Fill by) override {
        if (by == Fill::Prefetch && prefetch_at_lru_end_) {
            make_least_recent(set, way);
        } else {
            make_most_recent(set, way);
        }
    }

    unsigned victim(uint64_t set) override {
        const Place* p = &place_[set * stride_];
        if constexpr (sizeof(Place) == 1) {
            if (way_bits_ != 0) {
                const uint32_t m = lanes16::equal(p, static_cast<uint8_t>(ways_ - 1)) & way_bits_;
                if (m != 0) return static_cast<unsigned>(__builtin_ctz(m));
            }
        }
        for (uint64_t w = 0; w < ways_; ++w) {
            if (p[w] == ways_ - 1) return static_cast<unsigned>(w);
        }
        return 0;  // unreachable: the places are a permutation
    }

    void warm_host_cache(uint64_t set) const override { __builtin_prefetch(&place_[set * stride_], 1); }

private:
    void make_most_recent(uint64_t set, unsigned way) {
        Place* p = &place_[set * stride_];
        const Place old = p[way];
        if constexpr (sizeof(Place) == 1) {
            if (way_bits_ != 0) {
                lanes16::increment_below(p, old, way_mask_);
                p[way] = 0;
                return;
            }
        }
        for (uint64_t w = 0; w < ways_; ++w) p[w] = static_cast<Place>(p[w] + (p[w] < old));
        p[way] = 0;
    }

    void make_least_recent(uint64_t set, unsigned way) {
        Place* p = &place_[set * stride_];
        const Place old = p[way];
        if constexpr (sizeof(Place) == 1) {
            if (way_bits_ != 0) {
                lanes16::decrement_above(p, old, way_mask_);
                p[way] = static_cast<Place>(ways_ - 1);
                return;
            }
        }
        for (uint64_t w = 0; w < ways_; ++w) p[w] = static_cast<Place>(p[w] - (p[w] > old));
        p[way] = static_cast<Place>(ways_ - 1);
    }

    uint64_t ways_;
    uint64_t stride_;
    uint32_t way_bits_;  // sets of at most 16 ways (bytes: Place is 1 byte) are in lanes: bit w for way w; else 0
    std::vector<Place> place_;  // per way: its place in its set's order; set s's at s * stride_
    uint8_t way_mask_[lanes16::kLanes];  // 0xff for a way, 0 for padding
    bool prefetch_at_lru_end_;
};

std::unique_ptr<ReplacementPolicy> make(uint64_t sets, uint64_t ways, bool prefetch_at_lru_end) {
    if (ways <= 256) return std::make_unique<Lru<uint8_t>>(sets, ways, prefetch_at_lru_end);
    if (ways <= 65536) return std::make_unique<Lru<uint16_t>>(sets, ways, prefetch_at_lru_end);
    return std::make_unique<Lru<uint32_t>>(sets, ways, prefetch_at_lru_end);
}

}  // namespace

std::unique_ptr<ReplacementPolicy> make_lru(uint64_t sets, uint64_t ways) { return make(sets, ways, false); }

std::unique_ptr<ReplacementPolicy> make_lru_prefetch_lru(uint64_t sets, uint64_t ways) {
    return make(sets, ways, true);
}

}  // namespace pfsim

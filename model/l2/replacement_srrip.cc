// Static re-reference interval prediction (Jaleel et al., ISCA 2010), 2-bit,
// hit priority: each way holds a re-reference prediction value (RRPV) from 0
// (soon) to 3 (distant). A demand hit sets 0; a demand fill enters at 2 (long),
// a prefetch fill at 3 (distant: replaced first unless a core touches it); a
// prefetch reaching a resident line changes nothing, being no evidence of
// reuse. The victim is the lowest way at 3, after ageing the set until one is.
#include <algorithm>
#include <memory>
#include <vector>

#include "model/l2/replacement.h"

namespace pfsim {

namespace {

class Srrip final : public ReplacementPolicy {
public:
    Srrip(uint64_t sets, uint64_t ways) : ways_(ways), rrpv_(sets * ways, kDistant) {}

    void touch(uint64_t set, unsigned way, Fill by) override {
        if (by == Fill::Demand) rrpv_[set * ways_ + way] = 0;
    }

    void insert(uint64_t set, unsigned way, Fill by) override {
        rrpv_[set * ways_ + way] = by == Fill::Prefetch ? kDistant : kLong;
    }

    unsigned victim(uint64_t set) override {
        uint8_t* r = &rrpv_[set * ways_];
        const uint8_t oldest = *std::max_element(r, r + ways_);
        for (uint64_t w = 0; w < ways_; ++w) r[w] = static_cast<uint8_t>(r[w] + (kDistant - oldest));
        return static_cast<unsigned>(std::find(r, r + ways_, kDistant) - r);
    }

    void warm_host_cache(uint64_t set) const override { __builtin_prefetch(&rrpv_[set * ways_], 1); }

private:
    static constexpr uint8_t kLong = 2, kDistant = 3;
    uint64_t ways_;
    std::vector<uint8_t> rrpv_;
};

}  // namespace

std::unique_ptr<ReplacementPolicy> make_srrip(uint64_t sets, uint64_t ways) {
    return std::make_unique<Srrip>(sets, ways);
}

}  // namespace pfsim

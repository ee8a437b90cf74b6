// C = iters x (A B) for all-ones 128 x 128 operands: every element iters x 128
// (the case file's golden). Y's first row: the row sums of the expert with the
// highest score (the lower index on a tie); its second row: those of the
// runner-up if its score reaches the threshold, else Y's initial zeros. W holds
// small whole numbers: every sum is exact in any order.
#include <stdexcept>

#include "pfsim_golden.h"

constexpr uint64_t kCols = 4096;

extern "C" void compute_golden(pfsim::golden::Args& args) {
    const double experts = args.param("experts"), rows = args.param("rows"), blocks = args.param("blocks");
    if (experts < 2 || experts > 64) throw std::invalid_argument("--arg experts must be 2..64");
    if (blocks < 1 || rows < 1 || static_cast<uint64_t>(rows) % (4 * static_cast<uint64_t>(blocks)) != 0) {
        throw std::invalid_argument("--arg rows must be a positive multiple of 4 x blocks");
    }
    const int32_t* scores = args.tensor("scores").as<int32_t>();
    const float* w = args.tensor("W").as<float>();
    float* y = args.tensor("Y").as<float>();
    const uint64_t n = static_cast<uint64_t>(experts), per = static_cast<uint64_t>(rows);
    uint64_t first = 0;
    for (uint64_t e = 1; e < n; ++e) {
        if (scores[e] > scores[first]) first = e;
    }
    uint64_t second = first == 0 ? 1 : 0;
    for (uint64_t e = second + 1; e < n; ++e) {
        if (e != first && scores[e] > scores[second]) second = e;
    }
    const bool gated = scores[second] >= args.scalar("threshold");
    for (uint64_t slot = 0; slot < 2; ++slot) {
        const uint64_t expert = slot == 0 ? first : second;
        for (uint64_t r = 0; r < per; ++r) {
            float sum = 0;
            const float* row = w + (expert * per + r) * kCols;
            for (uint64_t k = 0; k < kCols; ++k) sum += row[k];
            y[slot * per + r] = slot == 1 && !gated ? 0.0f : sum;
        }
    }
}

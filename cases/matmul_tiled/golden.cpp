// C = A x B with A, B and C stored tile by tile: A tile (m, s) at m * 16 + s,
// B tile (n, s) at n * 16 + s, C tile (m, n) at m * blocks + n, each 128 x 128
// row-major. The elements are whole multiples of 1/8 in [-1, 1]: every
// product and every fp32 sum of 2048 of them is exact, in any order.
#include <vector>

#include <pto/pfsim_elements.hpp>

#include "pfsim_golden.h"

constexpr uint64_t kT = 128, kSteps = 16, kTile = kT * kT;

extern "C" void compute_golden(pfsim::golden::Args& args) {
    const double m_blocks = args.param("m_blocks"), blocks = args.param("blocks");
    if (m_blocks < 1 || m_blocks > 16) throw std::invalid_argument("--arg m_blocks must be 1..16");
    if (blocks < 1 || blocks > 24) throw std::invalid_argument("--arg blocks must be 1..24 (one cluster each)");
    const pto::half* a = args.tensor("A").as<pto::half>();
    const pto::half* b = args.tensor("B").as<pto::half>();
    float* c = args.tensor("C").as<float>();
    std::vector<double> at(kTile), bt(kTile), acc(kTile);
    for (uint64_t m = 0; m < static_cast<uint64_t>(m_blocks); ++m) {
        for (uint64_t n = 0; n < static_cast<uint64_t>(blocks); ++n) {
            std::fill(acc.begin(), acc.end(), 0.0);
            for (uint64_t s = 0; s < kSteps; ++s) {
                for (uint64_t i = 0; i < kTile; ++i) at[i] = float(a[(m * kSteps + s) * kTile + i]);
                for (uint64_t i = 0; i < kTile; ++i) bt[i] = float(b[(n * kSteps + s) * kTile + i]);
                for (uint64_t r = 0; r < kT; ++r) {
                    for (uint64_t k = 0; k < kT; ++k) {
                        const double left = at[r * kT + k];
                        for (uint64_t col = 0; col < kT; ++col) acc[r * kT + col] += left * bt[k * kT + col];
                    }
                }
            }
            float* out = c + (m * static_cast<uint64_t>(blocks) + n) * kTile;
            for (uint64_t i = 0; i < kTile; ++i) out[i] = static_cast<float>(acc[i]);
        }
    }
}

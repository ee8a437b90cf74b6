// What rank `rank` gathers: its tokens, through the peer's expert FFN (the
// peer's weights, which every rank holds alike, summed per block in the
// kernel's order), scaled by the peer's rank + 1.
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "pfsim_golden.h"

extern "C" void compute_golden(pfsim::golden::Args& args) {
    constexpr uint64_t kTile = 4096, kTokenTiles = 32, kTilesPerBlock = 128, kBlocks = 4;
    if (args.param("ranks") != 2) throw std::invalid_argument("the MoE step runs on two ranks");
    const float scale = static_cast<float>(1 - static_cast<int>(args.param("rank")) + 1);
    const float* tokens = args.tensor("tokens").as<float>();
    const float* weights = args.tensor("weights").as<float>();
    float* combined = args.tensor("combined").as<float>();
    for (uint64_t k = 0; k < kBlocks; ++k) {
        std::vector<float> acc(kTile, 0.0f);
        for (uint64_t i = k * kTilesPerBlock; i < (k + 1) * kTilesPerBlock; ++i) {
            for (uint64_t j = 0; j < kTile; ++j) acc[j] += weights[i * kTile + j];
        }
        for (uint64_t t = k * kTokenTiles / kBlocks; t < (k + 1) * kTokenTiles / kBlocks; ++t) {
            for (uint64_t j = 0; j < kTile; ++j) combined[t * kTile + j] = (tokens[t * kTile + j] + acc[j]) * scale;
        }
    }
}

// out[i] = 2 * table[index[i]]: the passes multiply by 2 and 0.5 in turn (an
// odd count leaves one x2), then the row is added to itself. The table holds
// whole multiples of 1/8 below 126 in magnitude: every step is exact.
#include <cstring>

#include "pfsim_golden.h"

constexpr uint64_t kRowElems = 32768;

extern "C" void compute_golden(pfsim::golden::Args& args) {
    const double indices = args.param("indices"), distance = args.param("distance"), rows = args.param("rows");
    if (indices < 4 || indices > 1024 || static_cast<uint64_t>(indices) % 4 != 0) {
        throw std::invalid_argument("--arg indices must be a multiple of 4, at most 1024");
    }
    if (distance < 1 || distance > 16) throw std::invalid_argument("--arg distance must be 1..16");
    if (rows < 1) throw std::invalid_argument("--arg rows must be positive");
    const float* table = args.tensor("table").as<float>();
    const int32_t* index = args.tensor("index").as<int32_t>();
    float* out = args.tensor("out").as<float>();
    const float scale = static_cast<uint64_t>(args.param("passes")) % 2 ? 4.0f : 2.0f;
    for (uint64_t i = 0; i < static_cast<uint64_t>(indices); ++i) {
        const float* row = table + static_cast<uint64_t>(index[i]) * kRowElems;
        for (uint64_t e = 0; e < kRowElems; ++e) out[i * kRowElems + e] = row[e] * scale;
    }
}

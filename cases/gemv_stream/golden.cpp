// y = W x. W and x are whole multiples of 1/64 below 1/2 in magnitude, so every
// fp16 product is exact and every fp32 row sum of them too, in any order: the
// reference sums in double and rounds once.
#include <vector>

#include <pto/pfsim_elements.hpp>

#include "kernels/gemv_shape.h"
#include "pfsim_golden.h"

extern "C" void compute_golden(pfsim::golden::Args& args) {
    const double rows = args.param("rows"), distance = args.param("distance");
    if (rows <= 0 || static_cast<uint64_t>(rows) % (48 * gemv::kBlockRows) != 0) {
        throw std::invalid_argument("--arg rows=" + std::to_string(static_cast<int64_t>(rows)) +
                                    " must be a positive multiple of 192 (48 cores x 4-row blocks)");
    }
    if (distance < 1 || distance > gemv::kMaxDistance) throw std::invalid_argument("--arg distance must be 1..16");
    const pto::half* w = args.tensor("W").as<pto::half>();
    const pto::half* x = args.tensor("x").as<pto::half>();
    float* y = args.tensor("y").as<float>();
    std::vector<double> xs(gemv::kCols);
    for (int c = 0; c < gemv::kCols; ++c) xs[c] = float(x[c]);
    std::vector<double> value(65536);  // each fp16 bit pattern's value
    for (uint32_t b = 0; b < 65536; ++b) {
        pto::half h;
        h.bits = static_cast<uint16_t>(b);
        value[b] = float(h);
    }
    for (uint64_t r = 0; r < static_cast<uint64_t>(rows); ++r) {
        double acc = 0;
        for (int c = 0; c < gemv::kCols; ++c) acc += value[w[r * gemv::kCols + c].bits] * xs[c];
        y[r] = static_cast<float>(acc);
    }
}

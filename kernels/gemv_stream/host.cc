#include <cstring>

#include "kernels/gemv_stream/gemv_common.h"
#include "pto/pto-inst.hpp"
#include "kernels/registry.h"


namespace pfsim {
namespace {

using pto::half;

class GemvStream : public KernelCase {
public:
    std::string name() const override { return "gemv_stream"; }
    std::string description() const override {
        return "y = W x over all 48 vector cores, fp16 W streamed in 32 KiB blocks, next blocks prefetched";
    }
    std::vector<KernelArgSpec> args() const override {
        return {{"rows", "12288", "rows of W (x 4096 fp16 columns: 96 MiB by default); a multiple of 192"},
                {"distance", "2", "how many blocks ahead each core prefetches (1..16)"}};
    }
    // Bandwidth-bound on every core. Without prefetch the 48 cores pull W from
    // GM through L2 at up to 1.6 TB/s (96 MiB: about 63 us of transfer; the
    // model reaches ~1.5 TB/s: ~66 us). With prefetch the
    // same bytes come through the SDMA engine, whose aggregate rate is 280 GB/s
    // in this preset (96 MiB: at least 360 us), each 32 KiB post also paying
    // 0.7 us request start-ups on its channel, and the engine, alternating
    // between 24 channels' requests, sdma.channel_switch_cost at nearly every
    // piece (two per post: its data and its flag): about 1.8 ms, the cores wait
    // on the engine. The model predicts a loss: gain at most 0 %.
    // (sdma.bandwidth and the switch cost are fitted to two streams; sweep them.)
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-5000, 0}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& a) const override {
        const uint64_t rows = a.at("rows");
        const uint64_t distance = a.at("distance");
        if (rows == 0 || rows % (48 * gemv::kBlockRows) != 0) {
            throw std::invalid_argument("kernel gemv_stream: --arg rows=" + std::to_string(rows) +
                                        " must be a positive multiple of 192");
        }
        if (distance < 1 || distance > gemv::kMaxDistance) {
            throw std::invalid_argument("kernel gemv_stream: --arg distance must be 1..16");
        }
        const uint64_t cols = gemv::kCols;
        PreparedKernel p;
        uint64_t w = 0, x = 0, y = 0;
        p.launch.args = {make_tensor(p, platform, rows * cols * 2, &w), make_tensor(p, platform, cols * 2, &x),
                         make_tensor(p, platform, rows * 4, &y), static_cast<int64_t>(rows),
                         static_cast<int64_t>(distance)};
        // Small integers over 64: exact in fp16, so the reference is exact too.
        // Every element is one of 256 values, its noise byte's: each converted once.
        std::vector<half> by_byte(256);
        for (unsigned b = 0; b < 256; ++b) by_byte[b] = half(static_cast<float>(static_cast<int8_t>(b) / 4) / 64.0f);
        std::vector<half> wh(rows * cols), xh(cols);
        const std::vector<uint8_t> noise = random_bytes(rows * cols + cols, 7);
        for (uint64_t i = 0; i < rows * cols; ++i) wh[i] = by_byte[noise[i]];
        for (uint64_t i = 0; i < cols; ++i) xh[i] = by_byte[noise[rows * cols + i]];
        platform.gm_write(w, wh.data(), rows * cols * 2);
        platform.gm_write(x, xh.data(), cols * 2);
        // Reference: the same operations in the same order (fp16 products, fp32 row
        // sums); the rounded product of each weight value with x[c] computed once per column.
        std::vector<float> product(cols * 256);
        for (uint64_t c = 0; c < cols; ++c) {
            for (unsigned b = 0; b < 256; ++b) product[c * 256 + b] = float(half(float(by_byte[b]) * float(xh[c])));
        }
        std::vector<float> ref(rows);
        for (uint64_t r = 0; r < rows; ++r) {
            float acc = 0;
            for (uint64_t c = 0; c < cols; ++c) acc += product[c * 256 + noise[r * cols + c]];
            ref[r] = acc;
        }
        std::vector<uint8_t> expected(rows * 4);
        std::memcpy(expected.data(), ref.data(), expected.size());
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{24, 2, false};
        p.launch.uses_sdma = true;
        p.outputs.push_back({"y", y, rows * 4, expected});
        return p;
    }
};

const GemvStream kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

#include <cstring>
#include <stdexcept>

#include "pto/pto-inst.hpp"
#include "kernels/registry.h"


namespace pfsim {
namespace {

using pto::half;
constexpr uint64_t kT = 128;

class MatmulTiled : public KernelCase {
public:
    std::string name() const override { return "matmul_tiled"; }
    std::string description() const override {
        return "C = A x B on cube cores, 128x128 tiles; each cluster's vector core prefetches the next tiles";
    }
    std::vector<KernelArgSpec> args() const override {
        return {{"m_blocks", "4", "row blocks of 128 in A and C (1..16)"},
                {"blocks", "2", "column blocks of 128 in B and C = clusters used (1..24)"}};
    }
    // Per 128-deep step the cube does 128^3 MACs (512 cycles, 0.28 us) on a 32 KiB
    // A tile and a 32 KiB B tile. B is reused from L2 after row block 0. Without
    // prefetch every A tile misses: 64 lines, 32 in flight, two ~0.3 us round
    // trips, ~0.6 us a step. With prefetch, row blocks 1.. find their A panel
    // resident (each 512 KiB post takes ~2.6 us at 280 GB/s, long before the
    // cube, ~10 us a row block, reaches it): a hit loads 32 KiB in ~0.16 us, so
    // the step is bound by the cube (0.28 us). Row block 0 is the same in both
    // runs. With 4 row blocks: (3/4) x (1 - 0.3/0.6) ~ 35 %: expected 20 to 45 %.
    ExpectedGain expected_gain(const KernelArgs&) const override { return {20, 45}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& args) const override {
        const uint64_t m_blocks = args.at("m_blocks"), blocks = args.at("blocks");
        if (m_blocks == 0 || m_blocks > 16) throw std::invalid_argument("kernel matmul_tiled: --arg m_blocks must be 1..16");
        if (blocks == 0 || blocks > 24) throw std::invalid_argument("kernel matmul_tiled: --arg blocks must be 1..24");
        const uint64_t steps = 16, k = steps * kT, tile = kT * kT, rows = m_blocks * kT, cols = blocks * kT;
        // A: rows x k; B: k x cols. Small multiples of 1/8: products and sums exact in fp32.
        std::vector<half> a(rows * k), b(k * cols);
        const std::vector<uint8_t> noise = random_bytes(a.size() + b.size(), 5);
        for (uint64_t i = 0; i < a.size(); ++i) a[i] = half(static_cast<float>(static_cast<int>(noise[i] % 17) - 8) / 8.0f);
        for (uint64_t i = 0; i < b.size(); ++i) b[i] = half(static_cast<float>(static_cast<int>(noise[a.size() + i] % 17) - 8) / 8.0f);
        // Tiled layouts: A tile (m, s) and B tile (n, s) are contiguous, panel by panel.
        std::vector<half> at(a.size()), bt(b.size());
        for (uint64_t m = 0; m < m_blocks; ++m)
            for (uint64_t s = 0; s < steps; ++s)
                for (uint64_t r = 0; r < kT; ++r)
                    for (uint64_t c = 0; c < kT; ++c)
                        at[(m * steps + s) * tile + r * kT + c] = a[(m * kT + r) * k + s * kT + c];
        for (uint64_t n = 0; n < blocks; ++n)
            for (uint64_t s = 0; s < steps; ++s)
                for (uint64_t r = 0; r < kT; ++r)
                    for (uint64_t c = 0; c < kT; ++c)
                        bt[(n * steps + s) * tile + r * kT + c] = b[(s * kT + r) * cols + n * kT + c];
        PreparedKernel p;
        uint64_t ga = 0, gb = 0, gc = 0;
        p.launch.args = {make_tensor(p, platform, at.size() * 2, &ga), make_tensor(p, platform, bt.size() * 2, &gb),
                         make_tensor(p, platform, m_blocks * blocks * tile * 4, &gc), static_cast<int64_t>(m_blocks)};
        platform.gm_write(ga, at.data(), at.size() * 2);
        platform.gm_write(gb, bt.data(), bt.size() * 2);
        // Reference: C tile (m, n) stored at (m * blocks + n); products summed in K order in fp32.
        std::vector<float> ref(m_blocks * blocks * tile);
        for (uint64_t m = 0; m < m_blocks; ++m)
            for (uint64_t n = 0; n < blocks; ++n)
                for (uint64_t r = 0; r < kT; ++r)
                    for (uint64_t c = 0; c < kT; ++c) {
                        float acc = 0;
                        for (uint64_t i = 0; i < k; ++i) acc += float(a[(m * kT + r) * k + i]) * float(b[i * cols + n * kT + c]);
                        ref[(m * blocks + n) * tile + r * kT + c] = acc;
                    }
        std::vector<uint8_t> expected(ref.size() * 4);
        std::memcpy(expected.data(), ref.data(), expected.size());
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{static_cast<uint32_t>(blocks), 1, true};
        p.launch.uses_sdma = true;
        p.outputs.push_back({"c", gc, expected.size(), expected});
        return p;
    }
};

const MatmulTiled kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

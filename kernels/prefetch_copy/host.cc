#include <cstring>

#include "kernels/registry.h"


namespace pfsim {
namespace {

class PrefetchCopy : public KernelCase {
public:
    std::string name() const override { return "prefetch_copy"; }
    std::string source() const override { return "cases/prefetch_demo/kernels/aiv/kernel_prefetch_copy.cpp"; }
    std::string description() const override {
        return "the onboard demo: prefetch 128 floats, wait, copy them to the output through a tile";
    }
    // Nothing overlaps the prefetch: the wait follows it at once, so the run
    // with prefetch pays the whole round trip (a few us: request build, doorbell,
    // 0.7 us engine start-up, the flag copy, polls) on top of the same copy.
    // Expected gain: negative; at most 0 %.
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-1000, 0}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs&) const override {
        PreparedKernel p;
        const uint64_t bytes = 128 * sizeof(float);
        uint64_t in = 0, out = 0;
        p.launch.args = {make_tensor(p, platform, bytes, &in), make_tensor(p, platform, bytes, &out)};
        std::vector<uint8_t> data(bytes);
        for (int i = 0; i < 128; ++i) {
            const float v = 0.5f * static_cast<float>(i) - 7.25f;
            std::memcpy(data.data() + 4 * i, &v, 4);
        }
        platform.gm_write(in, data.data(), bytes);
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{1, 1, false};
        p.launch.uses_sdma = true;
        p.outputs.push_back({"out", out, bytes, data});  // reference: a bit-exact copy
        return p;
    }
};

const PrefetchCopy kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

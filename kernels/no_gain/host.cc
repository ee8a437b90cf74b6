#include <cstring>

#include "kernels/registry.h"


namespace pfsim {
namespace {

class NoGain : public KernelCase {
public:
    std::string name() const override { return "no_gain"; }
    std::string description() const override {
        return "prefetch of data already resident, issued right before its wait: cannot gain";
    }
    // Every line the prefetch names is resident, so both runs read the same hits;
    // the prefetch only adds its round trip. The model must not invent a gain:
    // at most 0 % (plus 0.5 % for rounding).
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-1000, 0.5}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs&) const override {
        PreparedKernel p;
        const uint64_t elems = 16 * 1024, bytes = elems * 4;
        uint64_t in = 0, out = 0;
        p.launch.args = {make_tensor(p, platform, bytes, &in), make_tensor(p, platform, bytes, &out)};
        std::vector<float> data(elems), expected(elems);
        for (uint64_t i = 0; i < elems; ++i) {
            data[i] = static_cast<float>(static_cast<int64_t>(i % 997) - 498) * 0.125f;
            expected[i] = data[i] + data[i];
        }
        platform.gm_write(in, data.data(), bytes);
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{1, 1, false};
        p.launch.uses_sdma = true;
        std::vector<uint8_t> ref(bytes);
        std::memcpy(ref.data(), expected.data(), bytes);
        p.outputs.push_back({"out", out, bytes, ref});
        return p;
    }
};

const NoGain kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

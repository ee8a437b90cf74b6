#include <cstring>

#include "kernels/registry.h"


namespace pfsim {
namespace {

class PrefetchWait : public KernelCase {
public:
    std::string name() const override { return "prefetch_wait"; }
    std::string description() const override {
        return "microbenchmark: one vector core builds the session, prefetches `bytes`, waits";
    }
    std::vector<KernelArgSpec> args() const override {
        return {{"bytes", "1MiB", "bytes to prefetch"},
                {"rounds", "1", "prefetch + wait rounds (the session is built once)"}};
    }
    // Without prefetch the kernel only writes its status; with it, it also pays
    // the whole prefetch (bytes / 280 GB/s plus 0.7 us per 1 MiB request): the
    // gain is large and negative. It exists to time the prefetch, not to gain.
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-1e9, 0}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& a) const override {
        PreparedKernel p;
        uint64_t region = 0, status = 0;
        p.launch.args = {make_tensor(p, platform, a.at("bytes"), &region), make_tensor(p, platform, 32, &status),
                         static_cast<int64_t>(a.at("rounds"))};
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{1, 1, false};
        p.launch.uses_sdma = true;
        const std::vector<uint32_t> ones(8, 1);
        std::vector<uint8_t> expected(32);
        std::memcpy(expected.data(), ones.data(), 32);
        p.outputs.push_back({"status", status, 32, expected});
        return p;
    }
};

const PrefetchWait kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

#include <cstring>
#include <memory>
#include <stdexcept>

#include "kernels/registry.h"


namespace pfsim {
namespace {

class PrefetchWait : public KernelCase {
public:
    std::string name() const override { return "prefetch_wait"; }
    std::string description() const override {
        return "microbenchmark: vector cores each build a session, prefetch their share of `bytes`, wait; "
               "reports the rounds' span and bandwidth";
    }
    std::vector<KernelArgSpec> args() const override {
        return {{"bytes", "1MiB", "bytes to prefetch, split evenly over the cores"},
                {"rounds", "1", "prefetch + wait rounds (the session is built once)"},
                {"part", "0", "bytes per post (0: each round is one post of the core's share)"},
                {"wait", "1", "0: no wait (fire and forget); the run ends when the posts are made"},
                {"cores", "1", "vector cores, one per block: each posts on its own channel group (1..24)"}};
    }
    // Without prefetch the kernel only writes its status; with it, it also pays
    // the whole prefetch (bytes / 280 GB/s plus 0.7 us per request): the
    // gain is large and negative. It exists to time the prefetch, not to gain.
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-1e9, 0}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& a) const override {
        const uint64_t cores = a.at("cores"), bytes = a.at("bytes");
        if (cores == 0 || cores > 24) throw std::invalid_argument("kernel prefetch_wait: --arg cores must be 1..24");
        if (bytes % cores) throw std::invalid_argument("kernel prefetch_wait: --arg bytes must be a multiple of cores");
        PreparedKernel p;
        uint64_t region = 0, status = 0;
        auto probe = std::make_unique<uint8_t[]>(2 * cores * sizeof(uint64_t));
        p.launch.args = {make_tensor(p, platform, bytes, &region), make_tensor(p, platform, 32 * cores, &status),
                         static_cast<int64_t>(a.at("rounds")), static_cast<int64_t>(a.at("part")),
                         static_cast<int64_t>(a.at("wait")), reinterpret_cast<int64_t>(probe.get())};
        p.probe = reinterpret_cast<uint64_t*>(probe.get());
        p.probe_cores = cores;
        p.probe_bytes = bytes / cores * a.at("rounds");
        p.host_memory.push_back(std::move(probe));
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{static_cast<uint32_t>(cores), 1, false};
        p.launch.uses_sdma = true;
        const std::vector<uint32_t> ones(8 * cores, 1);
        std::vector<uint8_t> expected(32 * cores);
        std::memcpy(expected.data(), ones.data(), expected.size());
        p.outputs.push_back({"status", status, 32 * cores, expected});
        return p;
    }
};

const PrefetchWait kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

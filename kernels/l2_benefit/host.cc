#include <memory>
#include <stdexcept>

#include "kernels/registry.h"

namespace pfsim {
namespace {

// Calibration only (pfsim calibrate l2_benefit): not part of pfsim check.
class L2Benefit : public KernelCase {
public:
    std::string name() const override { return "l2_benefit"; }
    std::string description() const override {
        return "calibration: 16 KiB read as 16 x 1 KiB TLOADs, cold against prefetched + waited; reports the "
               "total time of the reads `measure` names";
    }
    bool in_check() const override { return false; }
    std::vector<KernelArgSpec> args() const override {
        return {{"pairs", "64", "cold read + prefetched read pairs, each on fresh 16 KiB regions"},
                {"measure", "0", "0: time the cold reads; 1: the prefetched ones"}};
    }
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-1e9, 1e9}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& a) const override {
        const uint64_t pairs = a.at("pairs");
        if (pairs == 0 || pairs > 4096) throw std::invalid_argument("kernel l2_benefit: --arg pairs must be 1..4096");
        PreparedKernel p;
        uint64_t region = 0;
        p.launch.args = {make_tensor(p, platform, 2 * pairs * 16384, &region),
                         static_cast<int64_t>(pairs), static_cast<int64_t>(a.at("measure"))};
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{1, 1, false};
        p.launch.uses_sdma = true;
        return p;
    }
};

const L2Benefit kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

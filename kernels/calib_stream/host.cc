#include <algorithm>
#include <memory>
#include <stdexcept>

#include "kernels/registry.h"


namespace pfsim {
namespace {

// Calibration only (pfsim calibrate): not part of pfsim check.
class CalibStream : public KernelCase {
public:
    std::string name() const override { return "calib_stream"; }
    std::string description() const override {
        return "calibration: cores stream GM<->UB in transfers of `size`; reports the timed pass's bandwidth";
    }
    bool in_check() const override { return false; }
    std::vector<KernelArgSpec> args() const override {
        return {{"cores", "1", "vector cores (1, or an even number up to 48)"},
                {"bytes", "4MiB", "bytes each core moves in the timed pass"},
                {"size", "64KiB", "bytes per transfer"},
                {"write", "0", "1: stores instead of loads"},
                {"warm", "0", "1: an untimed pass first, so the data is resident in L2"},
                {"shared", "0", "1: every core uses the same region"}};
    }
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-1e9, 1e9}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& a) const override {
        const uint64_t cores = a.at("cores"), bytes = a.at("bytes"), size = a.at("size");
        if (cores == 0 || cores > 48 || (cores > 1 && cores % 2)) {
            throw std::invalid_argument("kernel calib_stream: --arg cores must be 1 or even, at most 48");
        }
        if (size == 0 || bytes % size) throw std::invalid_argument("kernel calib_stream: --arg bytes must be a multiple of size");
        PreparedKernel p;
        const uint64_t base = platform.gm_alloc(a.at("shared") ? bytes : cores * bytes);
        p.launch.args = {static_cast<int64_t>(base),
                         static_cast<int64_t>(bytes), static_cast<int64_t>(size), static_cast<int64_t>(a.at("write")),
                         static_cast<int64_t>(a.at("warm")), static_cast<int64_t>(a.at("shared"))};
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{static_cast<uint32_t>(std::max<uint64_t>(1, cores / 2)),
                                       static_cast<uint32_t>(cores == 1 ? 1 : 2), false};
        p.launch.uses_sdma = false;
        return p;
    }
};

const CalibStream kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

#include <cstring>
#include <stdexcept>

#include "kernels/registry.h"


namespace pfsim {
namespace {

constexpr uint64_t kRowBytes = 32768 * 4;
constexpr uint64_t kCores = 4;

class GatherRows : public KernelCase {
public:
    std::string name() const override { return "gather_rows"; }
    std::string description() const override {
        return "out[i] = 2 * table[index[i]] on 4 vector cores: prefetch addresses computed at run time";
    }
    std::vector<KernelArgSpec> args() const override {
        return {{"rows", "1024", "rows in the table (128 KiB each)"},
                {"indices", "128", "indices gathered (a multiple of 4, at most 1024)"},
                {"distance", "2", "how many rows ahead each core prefetches (1..16)"},
                {"passes", "4", "vector passes over each row (the compute that hides the prefetch)"}};
    }
    // Per 128 KiB row and core, single-buffered: load, `passes` vector passes
    // (4 x 1024 cycles plus the final add: ~3 us), store, and the next load waits
    // for the store (~6.2 us a row in all). Without prefetch the load misses:
    // 256 lines, 32 in flight per ~0.3 us round trip, ~2.3 us. With prefetch it
    // hits (~0.65 us), the engine having moved the row behind the previous row's
    // compute; but each post costs the core ~1.5 us (two flush + doorbell at
    // 0.5 us, five uncached writes) and its wait a poll or two: the saving is
    // spent again. Expected: about break-even, -15 to +15 %. Cheaper posts
    // (flush, request costs) or more misses per post would make it pay.
    ExpectedGain expected_gain(const KernelArgs&) const override { return {-15, 15}; }

    PreparedKernel prepare(rt::Platform& platform, const KernelArgs& a) const override {
        const uint64_t rows = a.at("rows"), indices = a.at("indices");
        if (indices == 0 || indices % kCores || indices > 1024) {
            throw std::invalid_argument("kernel gather_rows: --arg indices must be a multiple of 4, at most 1024");
        }
        if (a.at("distance") < 1 || a.at("distance") > 16) {
            throw std::invalid_argument("kernel gather_rows: --arg distance must be 1..16");
        }
        if (rows == 0) throw std::invalid_argument("kernel gather_rows: --arg rows must be positive");
        PreparedKernel p;
        uint64_t table = 0, index = 0, out = 0;
        p.launch.args = {make_tensor(p, platform, rows * kRowBytes, &table),
                         make_tensor(p, platform, indices * 4 + 1024, &index),
                         make_tensor(p, platform, indices * kRowBytes, &out),
                         static_cast<int64_t>(indices / kCores), static_cast<int64_t>(a.at("distance")),
                         static_cast<int64_t>(a.at("passes"))};
        std::vector<float> data(rows * kRowBytes / 4);
        for (uint64_t i = 0; i < data.size(); ++i) data[i] = static_cast<float>(static_cast<int64_t>(i * 2654435761u % 2001) - 1000) / 8.0f;
        platform.gm_write(table, data.data(), rows * kRowBytes);
        const std::vector<uint8_t> noise = random_bytes(indices * 4, 11);
        std::vector<int32_t> idx(indices);
        for (uint64_t i = 0; i < indices; ++i) {
            uint32_t r;
            std::memcpy(&r, noise.data() + 4 * i, 4);
            idx[i] = static_cast<int32_t>(r % rows);
        }
        platform.gm_write(index, idx.data(), indices * 4);
        std::vector<uint8_t> expected(indices * kRowBytes);
        for (uint64_t i = 0; i < indices; ++i) {
            for (uint64_t e = 0; e < kRowBytes / 4; ++e) {
                const float v = data[static_cast<uint64_t>(idx[i]) * (kRowBytes / 4) + e];
                const float twice = v + v;  // x2 and x0.5 passes are exact; then row + row
                std::memcpy(expected.data() + i * kRowBytes + e * 4, &twice, 4);
            }
        }
        if (a.at("passes") % 2) {  // an odd count leaves one x2
            for (uint64_t i = 0; i < expected.size(); i += 4) {
                float v;
                std::memcpy(&v, expected.data() + i, 4);
                v = v * 2.0f;
                std::memcpy(expected.data() + i, &v, 4);
            }
        }
        p.launch.name = name();
        p.launch.spec = rt::LaunchSpec{static_cast<uint32_t>(kCores), 1, false};
        p.launch.uses_sdma = true;
        p.outputs.push_back({"out", out, indices * kRowBytes, expected});
        return p;
    }
};

const GatherRows kernel;
const RegisterKernel registered(&kernel);

}  // namespace
}  // namespace pfsim

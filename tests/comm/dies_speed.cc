// Benchmark (bench/dies_speed.sh): host wall time per simulated microsecond
// with N dies in one simulation. Each die runs the same launch at once: 8
// vector blocks, each streaming 2 MiB through UB from its GM, and block 0 also
// TGETs 512 KiB from the next rank's GM (its own with one die) over the link.
// usage: dies_speed DIES [LAUNCHES]    prints one line: dies, launches, the
// simulated time (the longest die's, summed over launches), the host's wall and
// CPU time of the launches, each per simulated microsecond (CPU also per die)
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include "pto/pto-inst.hpp"
#include "runtime/platform/sim/sim_dies.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

using namespace pto;

constexpr int kTile = 4096;                 // floats: 16 KiB
constexpr uint64_t kStreamBytes = 2 << 20;  // per block
constexpr int kBlocks = 8;
constexpr int kGetElems = 512 * 1024 / 4;
using Piece = GlobalTensor<float, Shape<1, 1, 1, 1, kTile>, Stride<1, 1, 1, 1, 1>>;
using Vec = Tile<TileType::Vec, float, 1, kTile>;

// args: 0 this die's stream source (kBlocks x kStreamBytes), 1 outputs (kBlocks x kTile floats),
// 2 the next rank's data (kGetElems floats), 3 the local copy of it
void workload(int64_t* args) {
    const int32_t block = get_block_idx();
    auto* src = reinterpret_cast<float*>(args[0]) + block * (kStreamBytes / 4);
    Vec acc, w;
    TASSIGN(acc, 0x0);
    TASSIGN(w, kTile * 4);
    TLOAD(acc, Piece(src));
    for (uint64_t at = kTile; at < kStreamBytes / 4; at += kTile) {
        TLOAD(w, Piece(src + at));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        TADD(acc, acc, w);
        set_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE2, EVENT_ID0);
    }
    set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
    TSTORE(Piece(reinterpret_cast<float*>(args[1]) + block * kTile), acc);
    if (block != 0) return;
    using Whole = GlobalTensor<float, Shape<1, 1, 1, 1, kGetElems>, Stride<1, 1, 1, 1, 1>>;
    Whole from(reinterpret_cast<float*>(args[2])), to(reinterpret_cast<float*>(args[3]));
    Vec staging;
    TASSIGN(staging, 2 * kTile * 4);
    comm::TGET(to, from, staging);
}

int run(uint32_t dies, int launches) {
    static const Config cfg = test::config_with({});
    SimDies d(cfg, dies, "die");
    test::elaborate();
    std::vector<std::vector<int64_t>> args(dies);
    std::vector<uint64_t> data(dies);
    for (uint32_t r = 0; r < dies; ++r) {
        SimPlatform& die = d.die(r);
        const uint64_t src = die.gm_alloc(kBlocks * kStreamBytes), out = die.gm_alloc(kBlocks * kTile * 4);
        data[r] = die.gm_alloc(kGetElems * 4);
        const uint64_t copy = die.gm_alloc(kGetElems * 4);
        std::vector<float> fill(kBlocks * kStreamBytes / 4);
        for (size_t i = 0; i < fill.size(); ++i) fill[i] = static_cast<float>(i % 97);
        die.gm_write(src, fill.data(), fill.size() * 4);
        die.gm_write(data[r], fill.data(), kGetElems * 4);
        args[r] = {static_cast<int64_t>(d.device_pointer(r, src)), static_cast<int64_t>(d.device_pointer(r, out)), 0,
                   static_cast<int64_t>(d.device_pointer(r, copy)), 0, 0, 0, 0};
    }
    for (uint32_t r = 0; r < dies; ++r) args[r][2] = static_cast<int64_t>(d.device_pointer((r + 1) % dies, data[(r + 1) % dies]));
    std::vector<std::vector<int64_t*>> per_core(dies);
    std::vector<SimDies::Launch> all;
    for (uint32_t r = 0; r < dies; ++r) {
        per_core[r].assign(kBlocks, args[r].data());
        SimDies::Launch l;
        l.rank = r;
        l.entries.aiv = &workload;
        l.spec = rt::LaunchSpec{kBlocks, 1, false};
        l.args_per_core = per_core[r];
        all.push_back(l);
    }
    double simulated_ps = 0;
    const auto start = std::chrono::steady_clock::now();
    const std::clock_t cpu_start = std::clock();
    for (int i = 0; i < launches; ++i) {
        uint64_t longest = 0;
        for (const rt::LaunchResult& res : d.launch(all)) {
            if (!res.ok()) {
                std::fprintf(stderr, "dies_speed: %s\n", res.first_error().c_str());
                return 1;
            }
            longest = std::max(longest, res.kernel_time_ps);
        }
        simulated_ps += static_cast<double>(longest);
    }
    const double wall_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    const double cpu_ms = 1000.0 * static_cast<double>(std::clock() - cpu_start) / CLOCKS_PER_SEC;
    const double us = simulated_ps / 1e6;
    std::printf("dies %u  launches %d  simulated %.1f us  wall %.1f ms (%.3f per simulated us)  cpu %.1f ms (%.3f per "
                "simulated us, %.3f per die)\n",
                dies, launches, us, wall_ms, wall_ms / us, cpu_ms, cpu_ms / us, cpu_ms / us / dies);
    return 0;
}

}  // namespace
}  // namespace pfsim

int main(int argc, char** argv) {
    if (argc < 2 || std::atoi(argv[1]) < 1) {
        std::fprintf(stderr, "usage: dies_speed DIES [LAUNCHES]\n");
        return 2;
    }
    return pfsim::run(static_cast<uint32_t>(std::atoi(argv[1])), argc > 2 ? std::atoi(argv[2]) : 5);
}

// Calibration microbenchmark: every core moves `bytes` between GM and UB in
// transfers of `size` bytes (larger transfers as back-to-back 64 KiB loads),
// optionally after one untimed pass that makes the data resident in L2. Each
// core writes the start and end of its timed pass (ps) into the host probe.
// args: 0 probe (host uint64_t[2 * cores]), 1 GM base, 2 bytes per core,
//       3 transfer size, 4 1 = write (store) instead of read, 5 1 = warm pass first,
//       6 1 = every core uses the same region
// It reads simulated time and drives the move engines through pfsim's core
// interface directly: an instrument, not a kernel for the board.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"

constexpr int kMax = 65536;

namespace {
void pass(uint8_t* ub, uint64_t base, uint64_t bytes, uint64_t size, bool write) {
    for (uint64_t off = 0; off < bytes; off += size) {
        for (uint64_t part = 0; part < size; part += kMax) {
            const uint64_t n = size - part < kMax ? size - part : kMax;
            if (write) {
                pfsim::current_core().store(base + off + part, ub, n);
            } else {
                pfsim::current_core().load(base + off + part, ub, n);
            }
        }
    }
    pipe_barrier(PIPE_ALL);
}
}  // namespace

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    auto* probe = reinterpret_cast<uint64_t*>(args[0]);
    const uint64_t bytes = static_cast<uint64_t>(args[2]), size = static_cast<uint64_t>(args[3]);
    const bool write = args[4] != 0, warm = args[5] != 0, shared = args[6] != 0;
    const uint64_t core = static_cast<uint64_t>(get_block_idx(args) * 2 + get_sub_block_id(args));
    const uint64_t base = static_cast<uint64_t>(args[1]) + (shared ? 0 : core * bytes);
    uint8_t* ub = pfsim::current_core().buffer(pfsim::Buffer::Ub, 0x100, kMax);
    if (warm) pass(ub, base, bytes, size, write);
    probe[2 * core] = pfsim::current_core().now_ps();
    pass(ub, base, bytes, size, write);
    probe[2 * core + 1] = pfsim::current_core().now_ps();
}

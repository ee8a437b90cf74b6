// Calibration microbenchmark: every core moves `bytes` between GM and UB in
// transfers of `size` bytes (larger transfers as back-to-back 64 KiB loads),
// optionally after one untimed pass that makes the data resident in L2. Each
// core marks its timed pass (include/pfsim_timed_pass.h).
// args: 0 GM base, 1 bytes per core, 2 transfer size, 3 1 = write (store)
//       instead of read, 4 1 = warm pass first, 5 1 = every core uses the same region
// It reads simulated time and drives the move engines through pfsim's core
// interface directly: an instrument, not a kernel for the board.
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pfsim_timed_pass.h"

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
    const uint64_t bytes = static_cast<uint64_t>(args[1]), size = static_cast<uint64_t>(args[2]);
    const bool write = args[3] != 0, warm = args[4] != 0, shared = args[5] != 0;
    const uint64_t core = static_cast<uint64_t>(get_block_idx(args) * 2 + get_sub_block_id(args));
    const uint64_t base = static_cast<uint64_t>(args[0]) + (shared ? 0 : core * bytes);
    uint8_t* ub = pfsim::current_core().buffer(pfsim::Buffer::Ub, 0x100, kMax);
    if (warm) pass(ub, base, bytes, size, write);
    pfsim_timed_pass_begin();
    pass(ub, base, bytes, size, write);
    pfsim_timed_pass_end(bytes);
}

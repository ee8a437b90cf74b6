// Calibration microbenchmark: each block moves `bytes` between GM and UB in
// transfers of `size` bytes (larger transfers as back-to-back 64 KiB moves),
// optionally after one untimed pass that makes the data resident in L2, and
// marks its timed pass (include/pfsim_timed_pass.h). It drives the move
// engines through pfsim's core interface directly: an instrument, not a kernel
// for the board.
// args: 0 region, 1 bytes per block, 2 transfer size, 3 1 = write (store)
//       instead of read, 4 1 = warm pass first, 5 1 = every block uses the
//       region's first `bytes`
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "tensor.h"

using namespace pto;

#include "intrinsic.h"
#include "pfsim_timed_pass.h"

constexpr uint64_t kMax = 65536;

namespace {
void pass(uint8_t* ub, uint64_t base, uint64_t bytes, uint64_t size, bool write) {
    for (uint64_t off = 0; off < bytes; off += size) {
        const uint64_t transfer = bytes - off < size ? bytes - off : size;
        for (uint64_t part = 0; part < transfer; part += kMax) {
            const uint64_t n = transfer - part < kMax ? transfer - part : kMax;
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
    __gm__ ChipTensor* region = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    const uint64_t bytes = static_cast<uint64_t>(args[1]);
    const uint64_t size = args[2] > 0 ? static_cast<uint64_t>(args[2]) : kMax;
    const bool write = args[3] != 0, warm = args[4] != 0, shared = args[5] != 0;
    const uint64_t block = static_cast<uint64_t>(get_block_idx(args));
    pfsim::CoreOps& core = pfsim::current_core();
    const uint64_t base = core.gm_address(reinterpret_cast<const void*>(region->buffer.addr), region->buffer.size) +
                          (shared ? 0 : block * bytes);
    uint8_t* ub = core.buffer(pfsim::Buffer::Ub, 0x100, kMax);
    if (warm) pass(ub, base, bytes, size, write);
    pfsim_timed_pass_begin();
    pass(ub, base, bytes, size, write);
    pfsim_timed_pass_end(bytes);
}

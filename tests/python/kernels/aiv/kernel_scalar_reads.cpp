// A host-C++ scalar loop, as simulator branches are written: every block sums
// products of int16 elements of a shared input through pointer loads, all
// blocks reading the same lines at once (the L2's same-line ports busy), and
// every 64 elements also loads the line it reads into UB (an MTE2 load of that
// line, through the L2's cached socket), and stores its running sum into its own
// 64-byte line of the int64 output every 256. It ends with [0] the sum,
// [1] the number of loads it made, [2] the system counter.
//   args[2]: elements of the input read per pass; args[3]: passes.
//   args[4]: how each element is loaded: 0 a pointer load (the kernel's code, its
//            GM loads on the core's direct path); 1 the kernel ABI's
//            scalar_read() (the cached socket's path); 2 as 0, plus one more
//            pointer load every 512 (a kernel that must read and time differently).
#include <cstdint>
#include <pto/pto-inst.hpp>

#include "intrinsic.h"
#include "tensor.h"

static int64_t load(const int16_t* p, int64_t how) {
    if (how != 1) return *p;
    pfsim::CoreOps& core = pfsim::current_core();
    int16_t v = 0;
    core.scalar_read(core.gm_address(p, sizeof v), &v, sizeof v);
    return v;
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in_t = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out_t = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    const int16_t* in = reinterpret_cast<__gm__ int16_t*>(in_t->buffer.addr) + in_t->start_offset;
    __gm__ int64_t* out = reinterpret_cast<__gm__ int64_t*>(out_t->buffer.addr) + out_t->start_offset;
    const int32_t b = get_block_idx(args);
    const int64_t n = args[2], passes = args[3], how = args[4];
    int64_t sum = 0, loads = 0;
    for (int64_t pass = 0; pass < passes; ++pass) {
        for (int64_t i = 0; i < n; ++i) {
            const int64_t j = (i * 7 + b * 64) % n;
            sum += load(&in[i], how) * load(&in[j], how);
            loads += 2;
            if (how == 2 && loads % 512 == 0) {
                sum += load(&in[(j + 256) % n], how);
                ++loads;
            }
            if (i % 64 == 0) {
                pfsim::CoreOps& core = pfsim::current_core();
                const uint64_t line = core.gm_address(&in[i], 2) / 512 * 512;
                core.load(line, core.buffer(pfsim::Buffer::Ub, 0, 512), 512);
            }
            if (i % 256 == 255) out[8 * b] = sum;
        }
    }
    out[8 * b] = sum;
    out[8 * b + 1] = loads;
    out[8 * b + 2] = static_cast<int64_t>(get_sys_cnt());
    dcci(&out[8 * b], SINGLE_CACHE_LINE, CACHELINE_OUT);
}

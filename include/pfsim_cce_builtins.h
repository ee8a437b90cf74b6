// The CCE data-cache builtins a kernel may call without including anything on
// the board: dcci (clean and invalidate one line, or the whole data cache) and
// dsb (a data barrier), with their constants. pfsim's kernel headers
// ("tensor.h" and "intrinsic.h" in a kernel build, <pto/pto-inst.hpp>) include
// this, so a kernel that includes only "intrinsic.h" builds.
//
// Their effect in the model: dcci of one line costs core.dcci_line_cost, of
// the whole cache core.flush_cost after the store pipe drains, removes the
// line (or every line) from the core's scalar data cache (core.dcache: the
// next load of it misses; a dirty one is written back), and tells the
// sanitizer the line is out (its unflushed-write check); dsb drains the pipes.
// The values are not affected: pfsim's data cache keeps no bytes.
//
// Spelled as pfsim's CPU simulation (kernels are built with __CPU_SIM, as
// simpler's a2a3sim builds them): the constants and, there, the two calls are macros,
// so that a kernel's simulator branch may #undef and redefine them (generated
// kernels do, to declare `namespace cache_line_t`); a kernel that does takes its
// own definitions, and those calls cost nothing.
#pragma once

#include <type_traits>

#include "pfsim_kernel_abi.h"

namespace pfsim::cce {
constexpr int kSingleCacheLine = 0;
constexpr int kEntireDataCache = 1;

template <typename P>
inline void dcci(P line, int mode, int /*destination*/ = 0) {
    if constexpr (std::is_pointer_v<P>) {
        pfsim::current_core().dcci(line, mode == kEntireDataCache);
    } else {
        pfsim::current_core().dcci(nullptr, mode == kEntireDataCache);
    }
}
inline void dsb(int /*kind*/) { pfsim::current_core().barrier(); }
}  // namespace pfsim::cce

// cache_line_t
#ifndef SINGLE_CACHE_LINE
#define SINGLE_CACHE_LINE 0
#endif
#ifndef ENTIRE_DATA_CACHE
#define ENTIRE_DATA_CACHE 1
#endif
// dcci_dst_t
#ifndef CACHELINE_ALL
#define CACHELINE_ALL 0
#endif
#ifndef CACHELINE_UB
#define CACHELINE_UB 1
#endif
#ifndef CACHELINE_OUT
#define CACHELINE_OUT 2
#endif
#ifndef CACHELINE_ATOMIC
#define CACHELINE_ATOMIC 3
#endif
// mem_dsb_t
#ifndef DSB_ALL
#define DSB_ALL 0
#endif
#ifndef DSB_DDR
#define DSB_DDR 1
#endif
#ifndef DSB_UB
#define DSB_UB 2
#endif
#ifndef DSB_SEQ
#define DSB_SEQ 3
#endif

#if defined(__CPU_SIM)
#ifndef dcci
#define dcci(...) ::pfsim::cce::dcci(__VA_ARGS__)
#endif
#ifndef dsb
#define dsb(...) ::pfsim::cce::dsb(__VA_ARGS__)
#endif
#else
// pfsim's own code built by Bazel (its tests' kernels) holds members named
// dcci: plain functions there.
using pfsim::cce::dcci;
using pfsim::cce::dsb;
#endif

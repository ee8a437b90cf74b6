// pfsim's "intrinsic.h": what a kernel reads from its args beyond its own
// arguments -- the per-dispatch LocalContext at args[48] and the per-core
// GlobalContext at args[49] (layout in runtime/kernel_abi.h).
#pragma once

#include <cstdint>

#include "pfsim_cce_builtins.h"  // dcci, dsb: builtins on the board
#include "runtime/kernel_abi.h"

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif

using pfsim::rt::AsyncCtx;
using pfsim::rt::DeferredCompletionEntry;
using pfsim::rt::DeferredCompletionSlab;
using pfsim::rt::GlobalContext;
using pfsim::rt::LocalContext;
using pfsim::rt::MAX_COMPLETIONS_PER_TASK;
using pfsim::rt::DMA_WORKSPACE_KIND_COUNT;
using pfsim::rt::DMA_WORKSPACE_SDMA;
using pfsim::rt::DMA_WORKSPACE_URMA;

static constexpr int32_t SPMD_LOCAL_CONTEXT_INDEX = pfsim::rt::kLocalContextSlot;
static constexpr int32_t SPMD_GLOBAL_CONTEXT_INDEX = pfsim::rt::kGlobalContextSlot;

namespace pfsim_intrinsic {
inline __gm__ LocalContext* local_context(__gm__ int64_t* args) {
    return reinterpret_cast<__gm__ LocalContext*>(static_cast<uint64_t>(args[SPMD_LOCAL_CONTEXT_INDEX]));
}
inline __gm__ GlobalContext* global_context(__gm__ int64_t* args) {
    return reinterpret_cast<__gm__ GlobalContext*>(static_cast<uint64_t>(args[SPMD_GLOBAL_CONTEXT_INDEX]));
}
}  // namespace pfsim_intrinsic

// The task's logical block, in [0, get_block_num(args)).
static __aicore__ inline int32_t get_block_idx(__gm__ int64_t* args) {
    return pfsim_intrinsic::local_context(args)->block_idx;
}
static __aicore__ inline int32_t get_block_num(__gm__ int64_t* args) {
    return pfsim_intrinsic::local_context(args)->block_num;
}
// 0 or 1: which vector core of its cluster runs this block (meaningful for a
// vector core of a mixed task).
static __aicore__ inline int32_t get_sub_block_id(__gm__ int64_t* args) {
    return pfsim_intrinsic::global_context(args)->sub_block_id;
}
// How far above GM its uncached alias lies (gm.l2_cache_offset; 0: none): a
// load from a pointer moved up by it reads around the L2 (simpler #2323).
static __aicore__ inline uint64_t get_l2_cache_offset(__gm__ int64_t* args) {
    return pfsim_intrinsic::global_context(args)->l2_cache_offset;
}
// The async-DMA workspace of `kind`, or null (a kind out of range, or a worker
// without enable_sdma).
static __aicore__ inline __gm__ uint8_t* get_dma_workspace(__gm__ int64_t* args, int kind) {
    if (kind < 0 || kind >= DMA_WORKSPACE_KIND_COUNT) return nullptr;
    return reinterpret_cast<__gm__ uint8_t*>(pfsim_intrinsic::global_context(args)->dma_workspace[kind]);
}

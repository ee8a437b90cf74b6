// simpler's "platform_comm/comm_context.h": what a rank's kernels learn of a
// communication domain. The host (pfsim's level-3 run) fills one per rank in
// that rank's GM and passes its pointer as a scalar argument. The layout is an
// ABI shared with PTO-ISA's kernels: the offsets below are fixed.
//
// windowsIn[r] is the pointer rank r's window starts at, usable from every
// rank: on pfsim a pointer into rank r's GM, which another rank's loads,
// stores, TPUT/TGET and TNOTIFY reach through the die-to-die link. Each window
// holds winSize bytes. windowsOut is not used by a2a3's kernels (zero).
#pragma once

#include <cstddef>
#include <cstdint>

static constexpr uint32_t COMM_MAX_RANK_NUM = 64;

struct CommContext {
    uint64_t workSpace;      // scratch GM for the domain's collectives (0 when none)
    uint64_t workSpaceSize;
    uint32_t rankId;         // this rank
    uint32_t rankNum;        // ranks in the domain
    uint64_t winSize;        // bytes of each rank's window
    uint64_t windowsIn[COMM_MAX_RANK_NUM];
    uint64_t windowsOut[COMM_MAX_RANK_NUM];
};

static_assert(sizeof(CommContext) == 1056, "CommContext: the ABI's size");
static_assert(offsetof(CommContext, rankId) == 16 && offsetof(CommContext, winSize) == 24 &&
                  offsetof(CommContext, windowsIn) == 32 && offsetof(CommContext, windowsOut) == 544,
              "CommContext: the ABI's offsets");

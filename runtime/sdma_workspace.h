// Byte layout of the SDMA workspace in GM (prefetch-protocol.md §2.4). The same
// layout is written by the host (worker.cc) and read by kernels (prefetch.cc).
#pragma once

#include <cstdint>

#include "hw/sdma_workspace_layout.h"
#include "runtime/kernel_abi.h"

namespace pfsim::rt {

constexpr int DMA_WORKSPACE_KINDS = DMA_WORKSPACE_KIND_COUNT;

struct WorkspaceLayout {
    static constexpr uint64_t kHeader = 0;            // WorkspaceHeader
    static constexpr uint64_t kChannelInfo = 64;      // one ChannelRecord per channel
    static constexpr uint64_t kChannelInfoBytes = 64;
    // Post-done records: per channel group, queue_num x 128 B; one 8-byte record
    // per queue at a 64-byte stride. (The staging area before them is not public;
    // 4 KiB is pfsim's choice.)
    static constexpr uint64_t kPostDone = 4096;
    static constexpr uint64_t kPostDoneGroupBytes = 128;
    static constexpr uint64_t kPostDoneQueueStride = 64;
    // Flag-payload rings: 512 B per group = 64 slots x 8 B.
    static constexpr uint64_t kFlagRings = SdmaFlagRings::kStart;
    static constexpr uint64_t kFlagRingBytes = SdmaFlagRings::kRingBytes;
    static constexpr uint64_t kFlagSlots = SdmaFlagRings::kSlots;

    static uint64_t channel_info(uint64_t ws, uint32_t channel) {
        return ws + kChannelInfo + uint64_t{channel} * kChannelInfoBytes;
    }
    static uint64_t post_done(uint64_t ws, uint32_t group, uint32_t queue) {
        return ws + kPostDone + uint64_t{group} * kPostDoneGroupBytes + uint64_t{queue} * kPostDoneQueueStride;
    }
    static uint64_t flag_slot(uint64_t ws, uint32_t group, uint64_t post_id) {
        return ws + kFlagRings + uint64_t{group} * kFlagRingBytes + (post_id % kFlagSlots) * 8;
    }
};

struct WorkspaceHeader {
    uint32_t flag;             // 1 once the host has filled the workspace
    uint32_t total_queue_num;  // channels
    uint8_t reserved[56];
};
static_assert(sizeof(WorkspaceHeader) == 64, "header is one 64-byte line");

// One channel's record, filled by the host from the driver's queue.
struct ChannelRecord {
    uint32_t sq_head;
    uint32_t sq_tail;  // (head, tail) are read and written as one packed 8-byte pair
    uint64_t sq_base;
    uint64_t doorbell_base;
    uint32_t sq_depth;
    uint32_t sq_id;
    uint32_t cq_id;
    uint32_t logic_cq_id;
    uint64_t cqe_addr;
    uint32_t report_count;
    uint32_t stream_id;
    uint32_t device_id;
    uint32_t reserved;
};
static_assert(sizeof(ChannelRecord) == 64, "channel record is one 64-byte line");

// get_dma_workspace(args, kind): the workspace's device pointer, or null for a
// kind outside [0, 2) or when none was provisioned.
void* get_dma_workspace(const int64_t* args, int kind);

}  // namespace pfsim::rt

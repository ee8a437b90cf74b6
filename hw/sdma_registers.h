// An SDMA channel's register block (the engine's MMIO interface): the host
// and the runtime write it, the engine's front-end (model/sdma) decodes it,
// and the configuration's checks keep sdma.doorbell_tail_offset and
// sdma.doorbell_stride inside it.
//
// Register block of channel c (at sdma.mmio_base + c * sdma.doorbell_stride):
//   sdma.doorbell_tail_offset  tail doorbell (write, 4 B), below kHead
//   0x100 head (read, 4 B)          0x108 ring base in GM (read/write, 8 B;
//                                   a write re-creates the queue: empty and cold)
//   0x110 ring depth (r/w, 4 B)     0x118 error code, SdmaError (read, 4 B)
//   0x120 requests completed (read, 8 B)
#pragma once

#include <cstdint>

namespace pfsim {

struct SdmaRegister {
    static constexpr uint64_t kHead = 0x100;  // the first status register: the doorbells lie below it
    static constexpr uint64_t kRingBase = 0x108;
    static constexpr uint64_t kRingDepth = 0x110;
    static constexpr uint64_t kError = 0x118;
    static constexpr uint64_t kCompleted = 0x120;
    // The smallest block that holds them: two channels' blocks never overlap
    // when sdma.doorbell_stride is at least this.
    static constexpr uint64_t kBlockBytes = 0x200;
};

}  // namespace pfsim

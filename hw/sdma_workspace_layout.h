// Where the SDMA workspace (prefetch-protocol.md §2.4) keeps its flag-payload
// rings: the part of its layout that its size and the posts a session may have
// outstanding depend on. The runtime lays the workspace out with it
// (runtime/sdma_workspace.h, which kernels include too), and the
// configuration's checks keep prefetch.workspace_bytes and prefetch.max_posts
// within it.
#pragma once

#include <cstdint>

namespace pfsim {

struct SdmaFlagRings {
    // The rings start this far into the workspace (what lies before them:
    // header, channel records, post-done records).
    static constexpr uint64_t kStart = 16384;
    // One ring per channel group, of kSlots 8-byte slots: a post's flag
    // payload goes to slot post_id % kSlots, so at most kSlots posts of a
    // session are un-retired at once.
    static constexpr uint64_t kSlots = 64;
    static constexpr uint64_t kRingBytes = kSlots * 8;
};

}  // namespace pfsim

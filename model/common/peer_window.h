// How one die addresses another's GM: the peer window.
//
// Each die sees its own GM at [0, gm.size). Rank r's GM appears to every die
// at [peer_window(r), peer_window(r) + gm.size): an access there leaves the die
// through its link (model/link/die_link.h) and reaches rank r's L2 on its
// uncached, coherent port. The window is an addressing convention of the
// model (where a real die's global virtual addresses put a peer is not
// public); gm.size must be at most kPeerWindowBytes.
#pragma once

#include <cstdint>

namespace pfsim {

inline constexpr unsigned kPeerWindowShift = 40;
inline constexpr uint64_t kPeerWindowBytes = uint64_t{1} << kPeerWindowShift;
// The most ranks one simulation holds (the communication context's limit).
inline constexpr uint32_t kMaxRanks = 64;

inline constexpr uint64_t peer_window(uint32_t rank) { return uint64_t{rank + 1} << kPeerWindowShift; }
inline constexpr bool in_peer_window(uint64_t addr) {
    return addr >= kPeerWindowBytes && (addr >> kPeerWindowShift) <= kMaxRanks;
}
// The rank whose window holds `addr` (in_peer_window(addr) first), and the GM address there.
inline constexpr uint32_t peer_rank(uint64_t addr) { return static_cast<uint32_t>((addr >> kPeerWindowShift) - 1); }
inline constexpr uint64_t peer_offset(uint64_t addr) { return addr & (kPeerWindowBytes - 1); }

}  // namespace pfsim

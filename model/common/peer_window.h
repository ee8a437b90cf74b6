// How one die addresses another's GM: the peer window.
//
// Each die sees its own GM at [0, gm.size). Rank r's GM appears to every die
// at [peer_window(r), peer_window(r) + gm.size): an access there leaves the die
// through its link (model/link/die_link.h) and reaches rank r's L2 on its
// uncached, coherent port. The window is an addressing convention of the
// model (where a real die's global virtual addresses put a peer is not
// public); gm.size must be at most kPeerWindowBytes.
//
// The address plan of a die, each range apart from the others whatever the
// configuration and the rank count:
//   [0, gm.size)                                  its GM
//   [gm.l2_cache_offset, + gm.size)               GM's uncached alias (below kMaxL2CacheOffset + kPeerWindowBytes)
//   [peer_window(r), + gm.size), r < kMaxRanks    rank r's GM, from kPeerWindowBase up
#pragma once

#include <cstdint>

namespace pfsim {

inline constexpr unsigned kPeerWindowShift = 40;
inline constexpr uint64_t kPeerWindowBytes = uint64_t{1} << kPeerWindowShift;
// The most ranks one simulation holds (the communication context's limit).
inline constexpr uint32_t kMaxRanks = 64;
// The highest gm.l2_cache_offset the configuration takes (64 TiB): the alias
// then ends below kMaxL2CacheOffset + kPeerWindowBytes, since gm.size is at
// most kPeerWindowBytes.
inline constexpr uint64_t kMaxL2CacheOffset = uint64_t{64} << kPeerWindowShift;
// Where rank 0's window starts (128 TiB): above every alias.
inline constexpr uint64_t kPeerWindowBase = uint64_t{128} << kPeerWindowShift;
static_assert(kPeerWindowBase >= kMaxL2CacheOffset + kPeerWindowBytes, "the peer windows start above GM's alias");
static_assert(kPeerWindowBase + uint64_t{kMaxRanks} * kPeerWindowBytes > kPeerWindowBase, "the windows fit 64 bits");

inline constexpr uint64_t peer_window(uint32_t rank) { return kPeerWindowBase + (uint64_t{rank} << kPeerWindowShift); }
inline constexpr bool in_peer_window(uint64_t addr) {
    return addr >= kPeerWindowBase && ((addr - kPeerWindowBase) >> kPeerWindowShift) < kMaxRanks;
}
// The rank whose window holds `addr` (in_peer_window(addr) first), and the GM address there.
inline constexpr uint32_t peer_rank(uint64_t addr) {
    return static_cast<uint32_t>((addr - kPeerWindowBase) >> kPeerWindowShift);
}
inline constexpr uint64_t peer_offset(uint64_t addr) { return addr & (kPeerWindowBytes - 1); }

}  // namespace pfsim

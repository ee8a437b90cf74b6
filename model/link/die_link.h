// The way out of one die to the GM of the others (the die-to-die link).
//
// Cores and the SDMA engine send their accesses to a peer window
// (model/common/peer_window.h) here. Each access crosses the link to the
// rank it names: its bytes take the link to that rank (link.bandwidth, one
// calendar per destination, shared by every initiator of this die), then
// link.latency, then the peer's L2 serves it on its uncached port (coherent
// with the peer's cached lines, allocating nothing), and the answer (the read
// data, the write's acknowledgement) takes link.latency back. Its completion
// is answered in the loosely-timed way of the rest of the model (delay, or
// IssuedEarlierExtension for an access issued before SystemC time).
//
// An address outside every connected rank's GM is an address error, as an
// address outside GM is on a die's own ports. A die with no peers (the one-die
// simulation) refuses every peer address.
#pragma once

#include <cstdint>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_initiator_socket.h>
#include <tlm_utils/multi_passthrough_target_socket.h>

#include "model/common/calendar.h"
#include "model/config/config.h"
#include "model/l2/l2_cache.h"
#include "model/stats/stats.h"

namespace pfsim {

#define PFSIM_LINK_STATS(COUNTER, FORMULA)                                                     \
    COUNTER(reads, "count", "accesses that read a peer die's GM")                               \
    COUNTER(writes, "count", "accesses that wrote a peer die's GM")                             \
    COUNTER(read_bytes, "bytes", "bytes read from peer dies' GM")                               \
    COUNTER(write_bytes, "bytes", "bytes written to peer dies' GM")                             \
    COUNTER(wait, "ps", "time accesses waited for the link's bandwidth (behind earlier bytes)") \
    COUNTER(refused, "count", "accesses to a peer address no connected die holds")
PFSIM_STATS(LinkStats, PFSIM_LINK_STATS)

class DieLink : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<DieLink> in;      // from this die's cores and SDMA engine
    // To each rank's L2 uncached port (none in a one-die simulation).
    tlm_utils::multi_passthrough_initiator_socket<DieLink, 32, tlm::tlm_base_protocol_types, 0,
                                                  sc_core::SC_ZERO_OR_MORE_BOUND>
        out;

    // gm.size fits a peer window (the configuration checked it).
    DieLink(sc_core::sc_module_name name, const Config& cfg);

    // Binds `out` to rank 0, 1, ... in that order: call once per rank (this
    // die's own too), before the simulation starts.
    void connect(L2Cache& rank_l2);
    uint32_t ranks() const { return static_cast<uint32_t>(calendars_.size()); }
    // Whether [addr, addr + len) lies in the GM of a connected rank.
    bool reaches(uint64_t addr, uint64_t len) const;
    const LinkStats& stats() const { return stats_; }

private:
    void transport(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    unsigned int transport_dbg(int id, tlm::tlm_generic_payload& p);

    const uint64_t gm_size_;
    const double bandwidth_;
    const Tick latency_;
    std::vector<Calendar> calendars_;  // by destination rank
    LinkStats stats_;
};

}  // namespace pfsim

#include "model/link/die_link.h"

#include <stdexcept>

#include "model/common/payload.h"
#include "model/common/peer_window.h"
#include "model/common/time.h"

namespace pfsim {

DieLink::DieLink(sc_core::sc_module_name name, const Config& cfg)
    : sc_module(name),
      in("in"),
      out("out"),
      gm_size_(cfg.bytes("gm.size")),
      bandwidth_(cfg.bandwidth("link.bandwidth")),
      latency_(cfg.time("link.latency")) {
    in.register_b_transport(this, &DieLink::transport);
    in.register_transport_dbg(this, &DieLink::transport_dbg);
}

void DieLink::connect(L2Cache& rank_l2) {
    out.bind(rank_l2.uncached);
    calendars_.emplace_back();
}

bool DieLink::reaches(uint64_t addr, uint64_t len) const {
    if (!in_peer_window(addr) || peer_rank(addr) >= ranks()) return false;
    const uint64_t offset = peer_offset(addr);
    return offset < gm_size_ && len <= gm_size_ - offset;
}

void DieLink::transport(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const uint64_t addr = p.get_address(), len = p.get_data_length();
    if (!reaches(addr, len)) {
        ++stats_.refused;
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const Tick issue = issue_time(p, delay);
    const uint32_t rank = peer_rank(addr);
    const Tick own = transfer_time(len, bandwidth_);
    const Tick sent = calendars_[rank].reserve(issue, own);
    stats_.wait += sent - issue - own;
    const bool write = p.is_write();
    (write ? stats_.writes : stats_.reads) += 1;
    (write ? stats_.write_bytes : stats_.read_bytes) += len;
    // The peer serves it as issued when it arrives: this hop's own issue-time
    // extension is put aside while it does.
    IssuedEarlierExtension* earlier = nullptr;
    p.get_extension(earlier);
    if (earlier) p.clear_extension(earlier);
    p.set_address(peer_offset(addr));
    tlm::tlm_fw_transport_if<>* peer = out[static_cast<int>(rank)];
    const Tick served = transport_at(peer, p, sent + latency_);
    p.set_address(addr);
    if (earlier) p.set_extension(earlier);
    if (p.is_response_error()) return;
    set_done(p, delay, served + latency_);
}

unsigned int DieLink::transport_dbg(int, tlm::tlm_generic_payload& p) {
    const uint64_t addr = p.get_address();
    if (!reaches(addr, p.get_data_length())) return 0;
    p.set_address(peer_offset(addr));
    const unsigned int n = out[static_cast<int>(peer_rank(addr))]->transport_dbg(p);
    p.set_address(addr);
    return n;
}

}  // namespace pfsim

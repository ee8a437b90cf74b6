#include "model/gm/gm.h"

#include "model/common/payload.h"

namespace pfsim {

GlobalMemory::GlobalMemory(sc_core::sc_module_name name, const Config& cfg)
    : sc_module(name),
      data("data"),
      uncached("uncached"),
      store_(cfg.bytes("gm.size"), BackingStore::host_pages(cfg.choice("gm.host_pages")), cfg.bytes("gm.l2_cache_offset")),
      timing_(cfg) {
    data.register_b_transport(this, &GlobalMemory::transport_data);
    uncached.register_b_transport(this, &GlobalMemory::transport_uncached);
    uncached.register_transport_dbg(this, &GlobalMemory::debug);
}

unsigned GlobalMemory::debug(tlm::tlm_generic_payload& p) {
    const uint64_t len = p.get_data_length();
    return copy(p.is_write(), p.get_address(), p.get_data_ptr(), len) ? static_cast<unsigned>(len) : 0;
}

bool GlobalMemory::copy(bool write, uint64_t addr, uint8_t* buf, uint64_t len) {
    if (!store_.contains(addr, len)) return false;
    if (write) {
        store_.write(addr, buf, len);
    } else {
        store_.read(addr, buf, len);
    }
    return true;
}

void GlobalMemory::transport_data(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    transport(p, delay, true);
}

void GlobalMemory::transport_uncached(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    transport(p, delay, false);
}

void GlobalMemory::transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay, bool cached) {
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    if (!store_.contains(addr, len)) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    set_done(p, delay, access(cached, p.is_write(), addr, p.get_data_ptr(), len, issue_time(p, delay)));
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

Tick GlobalMemory::access(bool cached, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue) {
    if (!buf) {  // timing only: the L2's refills and write-backs (the values are in GM already)
    } else if (write) {
        store_.write(addr, buf, len);
    } else {
        store_.read(addr, buf, len);
    }
    if (cached) {
        (write ? stats_.write_bytes : stats_.read_bytes) += len;
        ++(write ? stats_.write_requests : stats_.read_requests);
    } else {
        (write ? stats_.uncached_write_bytes : stats_.uncached_read_bytes) += len;
    }
    return timing_.schedule(write, addr, len, issue);
}

}  // namespace pfsim

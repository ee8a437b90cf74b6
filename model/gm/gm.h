// Global memory (HBM) of one die: a sparse data store behind GmTiming.
//
// Two TLM-2.0 target sockets, both LT (b_transport; the delay argument is the
// issue time relative to sc_time_stamp() on entry and the completion on return):
//   data     - the cached data path (L2 refills and write-backs, prefetch fills)
//   uncached - the uncached path (SDMA requests and flags, runtime control data)
// They share timing and data and are counted separately.
// An access outside GM answers TLM_ADDRESS_ERROR_RESPONSE.
#pragma once

#include <cstdint>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

#include "model/common/memory_target.h"
#include "model/config/config.h"
#include "model/gm/gm_timing.h"
#include "model/memory/backing_store.h"

namespace pfsim {

struct GmStats {
    uint64_t read_bytes = 0;            // data path
    uint64_t write_bytes = 0;
    uint64_t read_requests = 0;
    uint64_t write_requests = 0;
    uint64_t uncached_read_bytes = 0;   // uncached path
    uint64_t uncached_write_bytes = 0;
};

class GlobalMemory : public sc_core::sc_module, public MemoryTarget {
public:
    tlm_utils::simple_target_socket<GlobalMemory> data;
    tlm_utils::simple_target_socket<GlobalMemory> uncached;

    GlobalMemory(sc_core::sc_module_name name, const Config& cfg);

    BackingStore& store() { return store_; }
    const BackingStore& store() const { return store_; }
    const GmStats& stats() const { return stats_; }
    Tick access(bool cached, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue) override;

private:
    void transport_data(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    void transport_uncached(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    void transport(tlm::tlm_generic_payload& p, sc_core::sc_time& delay, bool cached);
    unsigned debug(tlm::tlm_generic_payload& p);

    BackingStore store_;
    GmTiming timing_;
    GmStats stats_;
};

}  // namespace pfsim

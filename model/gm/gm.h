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
#include "model/stats/stats.h"
#include "model/memory/backing_store.h"

namespace pfsim {

#define PFSIM_GM_STATS(COUNTER, FORMULA)                                                          \
    COUNTER(read_bytes, "bytes", "bytes read on the data path (L2 refills, prefetch fills)")          \
    COUNTER(write_bytes, "bytes", "bytes written on the data path (L2 write-backs)")                 \
    COUNTER(read_requests, "requests", "reads on the data path")                                    \
    COUNTER(write_requests, "requests", "writes on the data path")                                  \
    COUNTER(uncached_read_bytes, "bytes", "bytes read on the uncached path (SDMA copies, rings, polls)") \
    COUNTER(uncached_write_bytes, "bytes", "bytes written on the uncached path")                     \
    COUNTER(touched_bytes, "bytes", "host memory holding GM data: the 64 KiB pages writes have allocated")
PFSIM_STATS(GmStats, PFSIM_GM_STATS)

class GlobalMemory : public sc_core::sc_module, public MemoryTarget {
public:
    tlm_utils::simple_target_socket<GlobalMemory> data;
    tlm_utils::simple_target_socket<GlobalMemory> uncached;

    GlobalMemory(sc_core::sc_module_name name, const Config& cfg);

    BackingStore& store() { return store_; }
    const BackingStore& store() const { return store_; }
    GmStats stats() const {
        GmStats s = stats_;
        s.touched_bytes = store_.touched_bytes();
        return s;
    }
    Tick access(bool cached, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue) override;
    bool copy(bool write, uint64_t addr, uint8_t* buf, uint64_t len) override;

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

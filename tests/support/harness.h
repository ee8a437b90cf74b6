// Test harness: a Soc plus initiator sockets that tests drive directly.
//
// SystemC elaborates once per process, so a test binary creates every harness it
// needs first (make_harness), then calls elaborate() once; afterwards tests call
// the sockets from the test body (GM and L2 never wait) and run the SDMA engine's
// processes with run()/run_until_idle().
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "hw/sdma_request.h"
#include "model/common/atomic_add.h"
#include "model/config/config.h"
#include "model/soc/soc.h"

namespace pfsim::test {

class Harness : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<Harness> cached;
    tlm_utils::simple_initiator_socket<Harness> uncached;
    tlm_utils::simple_initiator_socket<Harness> mmio;
    Soc soc;

    Harness(sc_core::sc_module_name name, const Config& cfg, SocOptions options = {});

    // Accesses issued at absolute time `issue`; each returns its completion time.
    Tick read(uint64_t addr, void* data, uint64_t len, Tick issue = 0);
    Tick write(uint64_t addr, const void* data, uint64_t len, Tick issue = 0);
    Tick uncached_read(uint64_t addr, void* data, uint64_t len, Tick issue = 0);
    // A cached-path read around the L2 (a load through GM's uncached alias).
    Tick read_around(uint64_t addr, void* data, uint64_t len, Tick issue = 0);
    Tick uncached_write(uint64_t addr, const void* data, uint64_t len, Tick issue = 0);
    // A cached write whose elements the L2 adds to the line's (an atomic-add store).
    Tick atomic_add(uint64_t addr, const void* data, uint64_t len, AtomicElement element, Tick issue = 0);
    tlm::tlm_response_status status() const { return payload_.get_response_status(); }

    // SDMA helpers: program channel c's ring, append raw requests, ring the
    // doorbell; a register write returns when it completes.
    void setup_ring(unsigned c, uint64_t ring_base, uint32_t depth);
    void push_request(unsigned c, const SdmaRequest& r);
    void push_raw(unsigned c, const uint8_t raw[kSdmaRequestBytes]);
    Tick ring(unsigned c);
    Tick mmio_write(uint64_t addr, uint64_t value, unsigned bytes);
    uint64_t mmio_read(uint64_t addr, unsigned bytes);

private:
    Tick transport(tlm_utils::simple_initiator_socket<Harness>& s, bool write, uint64_t addr, void* data,
                   uint64_t len, Tick issue);
    struct Ring {
        uint64_t base = 0;
        uint32_t depth = 0;
        uint32_t tail = 0;
    };
    std::vector<Ring> rings_;
    tlm::tlm_generic_payload payload_;
};

// A fresh harness; call before elaborate().
Harness& make_harness(const Config& cfg, SocOptions options = {});
// Finishes elaboration (once per process).
void elaborate();
// Runs the simulation until nothing is left to do.
void run_until_idle();
// The a2a3 preset with overrides, validated; $PFSIM_TEST_SET (KEY=VALUE;...)
// is applied first.
Config config_with(const std::vector<std::string>& sets);
inline Tick now() { return sc_core::sc_time_stamp().value(); }

}  // namespace pfsim::test

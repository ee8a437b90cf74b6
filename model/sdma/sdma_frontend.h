// The SDMA engine's front-end: each channel's register block, its doorbells,
// and the fetch and decode of the requests its ring in GM holds. The engine
// (sdma_engine.h) is built with one, chosen by sdma.frontend: the C++ model
// (tlm_frontend.h) or the verilated RTL (rtl_frontend.h, rtl_stubs/sdma_frontend);
// it executes the requests the front-end hands it and times the doorbells'
// publication. The register block's map: hw/sdma_registers.h.
// A malformed request stops its channel with an error code; nothing else stops.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hw/sdma_registers.h"
#include "hw/sdma_request.h"
#include "model/common/time.h"
#include "model/config/config.h"

namespace pfsim {

// Misbehaviour the engine can be told to show (pfsim run --inject). Ordinals
// count from 1, engine-wide, from the moment the faults are set; 0 is off.
struct SdmaFaults {
    // sdma-error: the channel taking up the K-th request latches
    // SdmaError::InjectedFault instead of executing it (it stops, as on any error).
    uint64_t error_at_request = 0;
    // sdma-stall: no channel fetches another request; doorbells are accepted.
    bool stall = false;
    // doorbell-lost: the K-th doorbell write has no effect; the channel takes up
    // its requests at the next doorbell, whose tail covers them.
    uint64_t lose_doorbell = 0;
};

// What an injected fault did, for the run's summary.
struct SdmaFaultEvent {
    const char* kind = "";  // "sdma-error", "sdma-stall", "doorbell-lost"
    unsigned channel = 0;
    uint64_t ordinal = 0;    // the request (sdma-error) or doorbell (doorbell-lost)
    uint32_t ring_slot = 0;  // sdma-error: the request's slot; doorbell-lost: the tail written
    uint64_t ring_base = 0;  // the channel's ring in GM
    Tick at = 0;
    SdmaRequest request;     // sdma-error: the request refused
};

// A channel's registers now.
struct SdmaRing {
    uint64_t ring_base = 0;
    uint32_t depth = 0;
    uint32_t head = 0;
    uint32_t tail = 0;
    SdmaError error = SdmaError::None;
    uint64_t completed = 0;
    bool busy = false;  // a doorbell seen, its requests not all done
};

// A request the front-end hands its channel's process.
struct FrontendRequest {
    SdmaRequest request;
    SdmaError error = SdmaError::None;  // not None: the channel stopped here
    Tick taken = 0;    // when the channel took it up: its doorbell seen, its queue published
    Tick fetched = 0;  // when its 64-byte entry had arrived from GM
};

// What the front-end asks of the engine that executes its requests.
class SdmaBackend {
public:
    // Reads one request entry (kSdmaRequestBytes) at `addr`, issued at `issue`;
    // its completion time, or nothing when the address is outside GM.
    virtual std::optional<Tick> fetch_request(uint64_t addr, uint8_t* entry, Tick issue) = 0;
    // Why the engine cannot execute `r` (SdmaError::None: it can).
    virtual SdmaError refusal(const SdmaRequest& r) const = 0;
    // When the publication of a doorbell ends.
    struct Publication {
        Tick write_done;  // the doorbell write completes
        Tick seen;        // the engine sees the new tail: nothing it posts is fetched before
        Tick published;   // the channel's queue is published (its first doorbell's publication)
    };
    // Channel c's valid doorbell, written at `when`, posting `posted` requests.
    virtual Publication publish(unsigned c, Tick when, uint32_t posted) = 0;
    // Channel c latched an error at `when` without taking a request up (a doorbell it refused).
    virtual void stopped(unsigned c, Tick when) = 0;
    // Channel c drained its ring or stopped, now.
    virtual void idle(unsigned c) = 0;

protected:
    ~SdmaBackend() = default;
};

class SdmaFrontend {
public:
    // What a register write was.
    enum class Write { Refused, Register, NewQueue, Doorbell };

    virtual ~SdmaFrontend() = default;
    // The engine it serves; once, before the simulation starts.
    virtual void connect(SdmaBackend* engine) = 0;
    // Whether it runs a clock process of its own (run(); the engine spawns it).
    virtual bool clocked() const { return false; }
    virtual void run() {}
    // `bytes` of channel c's register at offset `reg`; false: no such register
    // at that width (an address error).
    virtual bool read(unsigned c, uint64_t reg, unsigned bytes, uint64_t* value) = 0;
    // A write at `when`; *done: when it completes (a doorbell: its publication).
    virtual Write write(unsigned c, uint64_t reg, unsigned bytes, uint64_t value, Tick when, Tick* done) = 0;
    virtual SdmaRing ring(unsigned c) = 0;
    // Blocks channel c's process until its next request is fetched and decoded.
    virtual FrontendRequest take(unsigned c) = 0;
    // The request last taken on channel c is done.
    virtual void retire(unsigned c) = 0;
    // Shows `faults` from now on, forgetting earlier events; throws
    // std::invalid_argument for faults it cannot show.
    virtual void inject(const SdmaFaults& faults) = 0;
    virtual const std::vector<SdmaFaultEvent>& fault_events() const = 0;
};

// The front-end sdma.frontend names; `waves` (.vcd or .fst) dumps the RTL's
// signals (sdma.frontend = rtl only: std::invalid_argument otherwise).
std::unique_ptr<SdmaFrontend> make_sdma_frontend(const Config& cfg, const std::string& waves = "");
// The product's build of the RTL: the VCD or the FST one, by the waves file's
// name (a ConfigError in a pfsim built without its RTL).
std::unique_ptr<SdmaFrontend> make_rtl_frontend(const Config& cfg, const std::string& waves = "");

}  // namespace pfsim

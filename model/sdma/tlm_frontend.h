// The SDMA front-end as a C++ model (sdma.frontend = tlm): the register block
// of sdma_frontend.h, doorbells checked against the ring's configuration, and
// each channel's requests fetched from its ring one at a time, the next one
// fetched while the current one executes (as the RTL front-end does). It can
// show injected faults (SdmaFaults).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>

#include "model/config/config.h"
#include "model/sdma/sdma_frontend.h"

namespace pfsim {

class TlmFrontend final : public SdmaFrontend {
public:
    explicit TlmFrontend(const Config& cfg);

    void connect(SdmaBackend* engine) override { engine_ = engine; }
    bool read(unsigned c, uint64_t reg, unsigned bytes, uint64_t* value) override;
    Write write(unsigned c, uint64_t reg, unsigned bytes, uint64_t value, Tick when, Tick* done) override;
    SdmaRing ring(unsigned c) override { return channels_.at(c).ring; }
    FrontendRequest take(unsigned c) override;
    void retire(unsigned c) override;
    void inject(const SdmaFaults& faults) override;
    const std::vector<SdmaFaultEvent>& fault_events() const override { return fault_events_; }

private:
    struct Channel {
        SdmaRing ring;
        bool doorbell_pending = false;
        bool draining = false;   // taking up the requests its doorbells posted
        bool executing = false;  // a request is between take() and retire()
        Tick seen = 0;           // when the engine sees the latest doorbell
        Tick published = 0;      // when its queue is published
        // The request after the executing one, fetched while it runs.
        int64_t ahead_index = -1;
        Tick ahead_fetched = 0;
        uint8_t ahead_entry[kSdmaRequestBytes] = {};
    };

    Tick ring_doorbell(unsigned c, uint32_t tail, Tick when);
    // Fetches the request at the head; refuses it with the error it latches.
    FrontendRequest fetch_head(unsigned c);
    // Fetches the request after the executing one, if the ring holds it and it
    // is not fetched yet.
    void fetch_ahead(unsigned c, Tick when);
    // Records channel c's first doorbell under sdma-stall.
    void note_stall(unsigned c);

    uint64_t tail_offset_;
    uint32_t max_depth_;
    SdmaBackend* engine_ = nullptr;
    std::vector<Channel> channels_;
    std::vector<std::unique_ptr<sc_core::sc_event>> doorbell_;
    SdmaFaults faults_;
    uint64_t requests_taken_ = 0, doorbells_seen_ = 0;  // since inject()
    std::vector<SdmaFaultEvent> fault_events_;
};

}  // namespace pfsim

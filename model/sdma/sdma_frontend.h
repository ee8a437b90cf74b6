// The SDMA engine's RTL front-end as the engine sees it (registers, doorbells,
// arbitration, request fetch and decode answered by rtl_stubs/sdma_frontend;
// --set sdma.frontend=rtl). Free of Verilator's headers: only
// model/sdma/rtl_frontend.h, the bridge's implementation, includes them.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "hw/sdma_request.h"
#include "model/common/time.h"
#include "model/config/config.h"

namespace pfsim {

struct FrontendRequest {
    SdmaRequest request;
    SdmaError error = SdmaError::None;  // not None: the channel stopped here
};

class RtlFrontend {
public:
    // Reads one 64-byte request at `addr`, issued at `issue`; its completion
    // time, or nothing when the address is outside GM.
    using Fetch = std::function<std::optional<Tick>(uint64_t addr, uint8_t* buf, Tick issue)>;
    using Idle = std::function<void(unsigned channel)>;  // channel drained its ring or stopped

    virtual ~RtlFrontend() = default;
    virtual void connect(Fetch fetch, Idle idle) = 0;
    // Whether it has run beyond its reset (register writes included).
    virtual bool started() const = 0;
    // Register access at offset `reg` of channel c; false: no such register.
    virtual bool read(unsigned c, uint64_t reg, uint64_t* value) = 0;
    virtual bool write(unsigned c, uint64_t reg, uint64_t value) = 0;
    virtual bool busy(unsigned c) = 0;
    // Channel c fetches nothing before `t` (its doorbell has not arrived, or its
    // queue is being published).
    virtual void hold_until(unsigned c, Tick t) = 0;
    // Blocks the calling process until channel c's next request is decoded.
    virtual FrontendRequest take(unsigned c) = 0;
    // The request last taken on channel c is done.
    virtual void retire(unsigned c) = 0;
    // The clock process; the engine spawns it.
    virtual void run() = 0;
};

// The product's build of the RTL: the VCD or the FST one, by the waves file's name.
std::unique_ptr<RtlFrontend> make_rtl_frontend(const Config& cfg, const std::string& waves = "");

}  // namespace pfsim

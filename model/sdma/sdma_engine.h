// The SDMA engine: channels with submission rings in GM and doorbell registers
// in an MMIO window. A doorbell write hands the engine a new ring tail; the
// channel then fetches each new 64-byte request from GM, decodes it and executes
// it, in order. Channels run in parallel as SystemC processes, under an
// aggregate bandwidth limit; a cold channel's first doorbell pays a publication
// cost serialised inside the engine, and with sdma.channel_setup = pending a
// channel's first submission pays its one-time set-up the same way. A prefetch's
// lines already resident in L2 only pass a residency check (moving no data).
//
// Register block of channel c at sdma.mmio_base + c * sdma.doorbell_stride:
//   sdma.doorbell_tail_offset  tail doorbell (write, 4 B)
//   0x100 head (read, 4 B)          0x108 ring base in GM (read/write, 8 B;
//                                   a write re-creates the queue: empty and cold)
//   0x110 ring depth (r/w, 4 B)     0x118 error code, SdmaError (read, 4 B)
//   0x120 requests completed (read, 8 B)
// A malformed request stops its channel with an error code; nothing else stops.
// With sdma.frontend = rtl, the registers, doorbells, fetch and decode are the
// RTL's (model/sdma/sdma_frontend.h); the engine still executes the requests.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>

#include "model/common/calendar.h"
#include "model/config/config.h"
#include "model/sdma/sdma_frontend.h"
#include "model/stats/stats.h"
#include "model/trace/recorder.h"
#include "hw/sdma_request.h"

namespace pfsim {

struct SdmaRegister {
    static constexpr uint64_t kHead = 0x100;
    static constexpr uint64_t kRingBase = 0x108;
    static constexpr uint64_t kRingDepth = 0x110;
    static constexpr uint64_t kError = 0x118;
    static constexpr uint64_t kCompleted = 0x120;
};

#define PFSIM_SDMA_STATS(COUNTER, FORMULA)                                                            \
    COUNTER(requests, "requests", "requests the engine executed (prefetch, copy and flag writes)")        \
    COUNTER(prefetch_requests, "requests", "executed prefetch (GM to L2) requests")                      \
    COUNTER(copy_requests, "requests", "executed copy requests (flag writes and GM to GM copies)")        \
    COUNTER(prefetch_bytes, "bytes", "bytes the prefetch requests named")                               \
    COUNTER(copy_bytes, "bytes", "bytes the copy requests moved")                                       \
    COUNTER(request_fetch_bytes, "bytes", "request entries (SQEs) read from the rings in GM")            \
    COUNTER(doorbells, "count", "doorbell writes (tail updates)")                                       \
    COUNTER(cold_starts, "count", "doorbells that found their channel cold (submission-queue publication)") \
    COUNTER(channel_setups, "count", "first submissions that paid the channel's one-time set-up (sdma.channel_setup = pending)") \
    COUNTER(resident_check_bytes, "bytes", "prefetched bytes found resident in L2 by the residency check (no data moved)") \
    COUNTER(channel_switches, "count", "times the engine turned to another channel's piece (sdma.channel_switch_cost each)") \
    COUNTER(channel_errors, "count", "requests or doorbells that latched a channel error")                \
    COUNTER(comm_copies, "requests", "executed copies to or from another die's GM (TGET_ASYNC, TPUT_ASYNC)") \
    COUNTER(comm_prefetch_wait, "ps", "time those copies waited for prefetches posted before them in their ring (their data moved, their lines landed; not other channels' share of the engine)")
PFSIM_STATS(SdmaStats, PFSIM_SDMA_STATS)

// One executed request, for tests that compare front-ends.
struct ExecutedRequest {
    unsigned channel = 0;
    SdmaRequest request;
    Tick started = 0, finished = 0;
};

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

struct SdmaChannelState {
    uint64_t ring_base = 0;
    uint32_t depth = 0;
    uint32_t head = 0;
    uint32_t tail = 0;
    bool warm = false;
    Tick warm_at = 0;             // end of the channel's submission-queue publication
    bool set_up = false;          // its one-time set-up paid (or not modelled: sdma.channel_setup = done)
    bool busy = false;            // doorbell seen, not yet drained
    bool doorbell_pending = false;
    SdmaError error = SdmaError::None;
    uint64_t completed = 0;
    Tick last_done = 0;           // completion time of the latest request
    Tick fills_done = 0;          // when every prefetched line so far has landed in L2
    Tick doorbell_arrival = 0;    // the latest doorbell reaches the engine: nothing is fetched before
    bool executing = false;       // a request is between its fetch and its completion
    // The next request, fetched while the current one moves data.
    int64_t ahead_index = -1;
    Tick ahead_fetched = 0;
    uint8_t ahead_raw[kSdmaRequestBytes] = {};
    // Time the channel spent executing prefetch requests (a running one's
    // so far: prefetch_busy_at), and by ring slot its value when the request
    // there was posted: what a copy waited behind prefetches in this ring.
    Tick prefetch_busy = 0;
    Tick prefetch_started = 0;
    bool in_prefetch = false;
    std::vector<Tick> posted_busy;
    Tick prefetch_busy_at(Tick t) const { return prefetch_busy + (in_prefetch ? t - prefetch_started : 0); }
};

class SdmaEngine : public sc_core::sc_module {
public:
    tlm_utils::multi_passthrough_target_socket<SdmaEngine> mmio;
    tlm_utils::simple_initiator_socket<SdmaEngine> memory;    // to L2's uncached port
    tlm_utils::simple_initiator_socket<SdmaEngine> prefetch;  // to L2's prefetch port
    tlm_utils::simple_initiator_socket<SdmaEngine> peers;     // to the die's link: peer windows (peer_window.h)

    SdmaEngine(sc_core::sc_module_name name, const Config& cfg);

    unsigned channels() const { return static_cast<unsigned>(state_.size()); }
    SdmaChannelState channel(unsigned c) const;
    // Notified whenever channel c drains its ring or stops on an error.
    const sc_core::sc_event& idle_event(unsigned c) const { return *idle_.at(c); }
    uint64_t register_address(unsigned c, uint64_t offset) const {
        return mmio_base_ + c * stride_ + offset;
    }
    uint64_t doorbell_address(unsigned c) const { return register_address(c, tail_offset_); }
    const SdmaStats& stats() const { return stats_; }
    // Requests in channel c's ring not yet executed.
    uint32_t queue_depth(unsigned c) const;
    // Record each executed request as a slice on its channel's lane.
    void attach_trace(TraceRecorder* trace) {
        trace_ = trace;
        trace_pid_ = 0;  // a new recorder names its processes again
    }
    // Appends every executed request to `log` (nullptr: stop).
    void log_requests(std::vector<ExecutedRequest>* log) { log_ = log; }
    // Shows `faults` from now on (the TLM front-end only: throws
    // std::invalid_argument with sdma.frontend = rtl); forgets earlier events.
    void inject(const SdmaFaults& faults);
    const std::vector<SdmaFaultEvent>& fault_events() const { return fault_events_; }
    // With sdma.frontend = rtl: dump the front-end's signals (.vcd or .fst).
    // Only before the simulation starts.
    void attach_waves(const std::string& path);
    // With sdma.frontend = rtl: another build of the RTL (tests). Only before
    // the simulation starts.
    void use_rtl_frontend(std::unique_ptr<RtlFrontend> frontend);
    // Which peer-window ranges a copy may read or write (the die's link says;
    // unset: none, every peer address is outside GM).
    void set_peer_reach(std::function<bool(uint64_t addr, uint64_t len)> reaches) { peer_reach_ = std::move(reaches); }

private:
    void transport_mmio(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    // Channel c's ring position, from the state or, with the RTL front-end, its registers.
    void ring_position(unsigned c, uint32_t* head, uint32_t* tail, uint32_t* depth) const;
    void run_channel(unsigned c);
    void run_channel_rtl(unsigned c);
    void execute_next(unsigned c);
    // Fetches the request after the executing one, if the ring holds it and it
    // is not fetched yet (one request ahead, as the RTL front-end does).
    void fetch_ahead(unsigned c, Tick when);
    // Records channel c's first doorbell under sdma-stall.
    void note_stall(unsigned c);
    void transport_mmio_rtl(unsigned c, uint64_t reg, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    // Waits until request r, taken up by its channel at `taken` and fetched at
    // `fetched`, may start moving data.
    // Waits until request r may begin moving data: how long of that it waited
    // for earlier prefetched lines to land (a copy's order after them).
    Tick wait_to_begin(unsigned c, const SdmaRequest& r, Tick taken, Tick fetched);
    // Moves request r's data; `started` is when its channel took it up.
    void move(unsigned c, const SdmaRequest& r, Tick started);
    void connect_rtl();
    // What the engine does for one opcode it implements. Any other opcode
    // stops the channel with SdmaError::BadOpcode before a byte moves.
    struct Opcode {
        uint8_t code;
        const char* name;         // its trace slice
        bool writes_destination;  // dst is checked against GM and written; else the bytes land in L2
        // A copy (the completion flag is one): it begins once the channel's
        // earlier prefetch fills have landed and ends once its bytes are written.
        bool ordered_after_fills;
        // Moves the piece [r.src + off, +n) from `t`, the engine through with it
        // at `paced`; returns when its bytes are where the opcode puts them.
        Tick (SdmaEngine::*piece)(unsigned c, const SdmaRequest& r, uint64_t off, uint64_t n, Tick t, Tick paced);
        uint64_t SdmaStats::*requests;
        uint64_t SdmaStats::*bytes;
    };
    static const Opcode kOpcodes[];
    static const Opcode* opcode(uint8_t code);  // nullptr: not implemented
    Tick prefetch_piece(unsigned c, const SdmaRequest& r, uint64_t off, uint64_t n, Tick t, Tick paced);
    Tick copy_piece(unsigned c, const SdmaRequest& r, uint64_t off, uint64_t n, Tick t, Tick paced);
    SdmaError validate(const SdmaRequest& r) const;
    // Completion time, or nothing when the address is outside GM.
    std::optional<Tick> memory_access(bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue);
    // Reserves engine bandwidth for channel c's `bytes` from `start`, with
    // sdma.channel_switch_cost when the engine turns to c from another channel
    // still moving data; returns when they are moved. `resident` of the bytes
    // (a prefetch's lines already in L2) only pass the residency check, at
    // sdma.resident_check_bandwidth.
    Tick reserve_bandwidth(unsigned c, uint64_t bytes, Tick start, uint64_t resident = 0);
    // The residency check: how many bytes of [addr, addr + len) are in L2 lines already resident.
    uint64_t resident_bytes(uint64_t addr, uint64_t len);
    // Prefetches [addr, addr + len) into L2 now, the engine finishing at engine_done.
    Tick fill_l2(uint64_t addr, uint64_t len, Tick engine_done);
    // Returns when the doorbell write completes (accept_doorbell).
    Tick ring_doorbell(unsigned c, uint32_t tail, Tick when);
    // A valid doorbell written at `when` is published: one publication at a time
    // engine-wide, sdma.doorbell_latency each, plus sdma.cold_channel_cost for a
    // cold channel's first (warm_at), plus sdma.channel_setup_cost for the first
    // that `submits` requests while the set-up is pending. The engine sees the
    // tail at its end (doorbell_arrival), and the write completes then. With
    // sdma.doorbell_write=posted a warm, set-up channel's doorbell skips the
    // queue: it arrives doorbell_latency after `when` and the write completes at once.
    Tick accept_doorbell(unsigned c, Tick when, bool submits);

    Config cfg_;  // to build the RTL front-end again with waves
    uint64_t mmio_base_, stride_, tail_offset_, gm_size_, max_request_bytes_, chunk_bytes_;
    uint32_t max_depth_;
    Tick startup_, doorbell_latency_, cold_cost_, switch_cost_, setup_cost_;
    bool posted_doorbells_, setup_pending_;
    double channel_bw_, aggregate_bw_, resident_check_bw_;
    std::vector<SdmaChannelState> state_;
    std::vector<std::vector<uint8_t>> copy_buffer_;  // per channel: one piece of a copy
    std::vector<std::unique_ptr<sc_core::sc_event>> doorbell_, idle_;
    Tick publish_busy_until_ = 0;  // the end of the latest publication
    Calendar aggregate_;  // sdma.bandwidth shared by all channels
    unsigned last_channel_ = ~0u;  // the channel of the latest piece reserved
    Tick last_piece_done_ = 0;     // until then (plus a switch) another channel's piece switches
    tlm::tlm_generic_payload payload_;
    SdmaStats stats_;
    std::unique_ptr<RtlFrontend> rtl_;
    std::vector<ExecutedRequest>* log_ = nullptr;
    TraceRecorder* trace_ = nullptr;
    int trace_pid_ = 0;
    std::vector<int> trace_lane_;  // per channel, 0 until used
    SdmaFaults faults_;
    uint64_t requests_taken_ = 0, doorbells_seen_ = 0;  // since inject()
    std::vector<SdmaFaultEvent> fault_events_;
    std::function<bool(uint64_t, uint64_t)> peer_reach_;
};

}  // namespace pfsim

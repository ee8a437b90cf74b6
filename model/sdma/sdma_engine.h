// The SDMA engine: channels with submission rings in GM and doorbell registers
// in an MMIO window. A doorbell write hands the engine a new ring tail; the
// channel then fetches each new 64-byte request from GM, decodes it and executes
// it, in order. Channels run in parallel as SystemC processes, under an
// aggregate bandwidth limit; a cold channel's first doorbell pays a publication
// cost serialised inside the engine, and with sdma.channel_setup = pending a
// channel's first submission pays its one-time set-up the same way. A prefetch's
// lines already resident in L2 only pass a residency check (moving no data).
//
// The registers, doorbells, fetch and decode are the front-end's
// (model/sdma/sdma_frontend.h: the C++ model or the RTL, chosen when the
// engine is built); the engine executes the requests it hands over.
#pragma once

#include <cstdint>
#include <deque>
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

// A channel now: its registers and when its latest request completed.
struct SdmaChannelState : SdmaRing {
    Tick last_done = 0;
};

class SdmaEngine : public sc_core::sc_module, private SdmaBackend {
public:
    tlm_utils::multi_passthrough_target_socket<SdmaEngine> mmio;
    tlm_utils::simple_initiator_socket<SdmaEngine> memory;    // to L2's uncached port
    tlm_utils::simple_initiator_socket<SdmaEngine> prefetch;  // to L2's prefetch port
    tlm_utils::simple_initiator_socket<SdmaEngine> peers;     // to the die's link: peer windows (peer_window.h)

    // With `frontend` (make_sdma_frontend(cfg) builds the one sdma.frontend names).
    SdmaEngine(sc_core::sc_module_name name, const Config& cfg, std::unique_ptr<SdmaFrontend> frontend);

    unsigned channels() const { return static_cast<unsigned>(timing_.size()); }
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
    void inject(const SdmaFaults& faults) { frontend_->inject(faults); }
    const std::vector<SdmaFaultEvent>& fault_events() const { return frontend_->fault_events(); }
    // Which peer-window ranges a copy may read or write (the die's link says;
    // unset: none, every peer address is outside GM).
    void set_peer_reach(std::function<bool(uint64_t addr, uint64_t len)> reaches) { peer_reach_ = std::move(reaches); }

private:
    // What the engine keeps of a channel: its doorbells' publication, the
    // timing of its requests, and its time on prefetches.
    struct Channel {
        bool warm = false;
        Tick warm_at = 0;             // end of the channel's submission-queue publication
        bool set_up = false;          // its one-time set-up paid (or not modelled: sdma.channel_setup = done)
        Tick doorbell_arrival = 0;    // the latest doorbell reaches the engine
        Tick last_done = 0;           // completion time of the latest request
        Tick fills_done = 0;          // when every prefetched line so far has landed in L2
        // Time the channel spent executing prefetch requests (a running one's
        // so far: prefetch_busy_at), and for each request posted and not yet
        // taken up, in ring order, its value when the request was posted: what
        // a copy waited behind prefetches in this ring.
        Tick prefetch_busy = 0;
        Tick prefetch_started = 0;
        bool in_prefetch = false;
        std::deque<Tick> posted_busy;
        Tick prefetch_busy_at(Tick t) const { return prefetch_busy + (in_prefetch ? t - prefetch_started : 0); }
    };

    // SdmaBackend: what the front-end asks of the engine.
    std::optional<Tick> fetch_request(uint64_t addr, uint8_t* entry, Tick issue) override;
    SdmaError refusal(const SdmaRequest& r) const override;
    // A doorbell written at `when` is published: one publication at a time
    // engine-wide, sdma.doorbell_latency each, plus sdma.cold_channel_cost for a
    // cold channel's first (warm_at), plus sdma.channel_setup_cost for the first
    // that posts requests while the set-up is pending. The engine sees the tail
    // at its end, and the write completes then. With sdma.doorbell_write=posted
    // a warm, set-up channel's doorbell skips the queue: it arrives
    // doorbell_latency after `when` and the write completes at once.
    Publication publish(unsigned c, Tick when, uint32_t posted) override;
    void stopped(unsigned c, Tick when) override;
    void idle(unsigned c) override { idle_[c]->notify(); }

    void transport_mmio(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    // Channel c's process: takes each request up from the front-end and executes it.
    void run_channel(unsigned c);
    // Waits until request r may begin moving data: how long of that it waited
    // for earlier prefetched lines to land (a copy's order after them).
    Tick wait_to_begin(unsigned c, const SdmaRequest& r, Tick taken, Tick fetched);
    // Moves request r's data; `started` is when its channel took it up.
    void move(unsigned c, const SdmaRequest& r, Tick started);
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

    uint64_t mmio_base_, stride_, tail_offset_, gm_size_, max_request_bytes_, chunk_bytes_;
    Tick startup_, doorbell_latency_, cold_cost_, switch_cost_, setup_cost_;
    bool posted_doorbells_, setup_pending_;
    double channel_bw_, aggregate_bw_, resident_check_bw_;
    std::unique_ptr<SdmaFrontend> frontend_;
    std::vector<Channel> timing_;
    std::vector<std::vector<uint8_t>> copy_buffer_;  // per channel: one piece of a copy
    std::vector<std::unique_ptr<sc_core::sc_event>> idle_;
    Tick publish_busy_until_ = 0;  // the end of the latest publication
    Calendar aggregate_;  // sdma.bandwidth shared by all channels
    unsigned last_channel_ = ~0u;  // the channel of the latest piece reserved
    Tick last_piece_done_ = 0;     // until then (plus a switch) another channel's piece switches
    tlm::tlm_generic_payload payload_;
    SdmaStats stats_;
    std::vector<ExecutedRequest>* log_ = nullptr;
    TraceRecorder* trace_ = nullptr;
    int trace_pid_ = 0;
    std::vector<int> trace_lane_;  // per channel, 0 until used
    std::function<bool(uint64_t, uint64_t)> peer_reach_;
};

}  // namespace pfsim

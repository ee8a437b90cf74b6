#include "model/sdma/sdma_engine.h"

#include <algorithm>
#include <stdexcept>
#include <cstdio>
#include <optional>
#include <cstring>
#include <string>

#include "model/common/payload.h"
#include "model/common/peer_window.h"
#include "model/common/time.h"
#include "model/l2/l2_cache.h"

namespace pfsim {

using sc_core::sc_time;

SdmaEngine::SdmaEngine(sc_core::sc_module_name name, const Config& cfg)
    : sc_module(name),
      mmio("mmio"),
      memory("memory"),
      prefetch("prefetch"),
      peers("peers"),
      cfg_(cfg),
      mmio_base_(cfg.bytes("sdma.mmio_base")),
      stride_(cfg.bytes("sdma.doorbell_stride")),
      tail_offset_(cfg.bytes("sdma.doorbell_tail_offset")),
      gm_size_(cfg.bytes("gm.size")),
      max_request_bytes_(cfg.bytes("sdma.max_request_bytes")),
      chunk_bytes_(cfg.bytes("sdma.chunk_bytes")),
      max_depth_(static_cast<uint32_t>(cfg.count("sdma.queue_depth"))),
      startup_(cfg.time("sdma.request_startup")),
      doorbell_latency_(cfg.time("sdma.doorbell_latency")),
      cold_cost_(cfg.time("sdma.cold_channel_cost")),
      switch_cost_(cfg.time("sdma.channel_switch_cost")),
      setup_cost_(cfg.time("sdma.channel_setup_cost")),
      posted_doorbells_(cfg.choice("sdma.doorbell_write") == "posted"),
      setup_pending_(cfg.choice("sdma.channel_setup") == "pending"),
      channel_bw_(cfg.bandwidth("sdma.channel_bandwidth")),
      aggregate_bw_(cfg.bandwidth("sdma.bandwidth")),
      resident_check_bw_(cfg.bandwidth("sdma.resident_check_bandwidth")),
      state_(cfg.count("sdma.channels")),
      copy_buffer_(state_.size()) {
    mmio.register_b_transport(this, &SdmaEngine::transport_mmio);
    if (cfg.choice("sdma.frontend") == "rtl") {
        rtl_ = make_rtl_frontend(cfg);
        connect_rtl();
        sc_core::sc_spawn([this] { rtl_->run(); }, "frontend_clock");
    }
    for (unsigned c = 0; c < state_.size(); ++c) {
        doorbell_.push_back(std::make_unique<sc_core::sc_event>());
        idle_.push_back(std::make_unique<sc_core::sc_event>());
        sc_core::sc_spawn([this, c] { rtl_ ? run_channel_rtl(c) : run_channel(c); },
                          sc_core::sc_gen_unique_name("channel"));
    }
}

void SdmaEngine::connect_rtl() {
    rtl_->connect(
        [this](uint64_t addr, uint8_t* buf, Tick issue) {
            stats_.request_fetch_bytes += kSdmaRequestBytes;
            return memory_access(false, addr, buf, kSdmaRequestBytes, issue);
        },
        [this](unsigned c) { idle_[c]->notify(); });
}

void SdmaEngine::attach_waves(const std::string& path) {
    if (!rtl_) throw std::logic_error("pfsim: SDMA waves need sdma.frontend = rtl");
    if (rtl_->started()) throw std::logic_error("pfsim: SDMA waves attached after the front-end ran");
    rtl_ = make_rtl_frontend(cfg_, path);
    connect_rtl();
}

void SdmaEngine::use_rtl_frontend(std::unique_ptr<RtlFrontend> frontend) {
    if (!rtl_) throw std::logic_error("pfsim: an RTL front-end needs sdma.frontend = rtl");
    if (rtl_->started()) throw std::logic_error("pfsim: RTL front-end replaced after it ran");
    rtl_ = std::move(frontend);
    connect_rtl();
}

void SdmaEngine::inject(const SdmaFaults& faults) {
    if (rtl_ && (faults.error_at_request || faults.stall || faults.lose_doorbell)) {
        throw std::invalid_argument("SDMA faults are injected into the TLM front-end: set sdma.frontend = tlm");
    }
    faults_ = faults;
    requests_taken_ = doorbells_seen_ = 0;
    fault_events_.clear();
}

void SdmaEngine::ring_position(unsigned c, uint32_t* head, uint32_t* tail, uint32_t* depth) const {
    if (!rtl_) {
        const SdmaChannelState& ch = state_.at(c);
        *head = ch.head;
        *tail = ch.tail;
        *depth = ch.depth;
        return;
    }
    uint64_t v = 0;
    rtl_->read(c, SdmaRegister::kHead, &v);
    *head = static_cast<uint32_t>(v);
    rtl_->read(c, tail_offset_, &v);
    *tail = static_cast<uint32_t>(v);
    rtl_->read(c, SdmaRegister::kRingDepth, &v);
    *depth = static_cast<uint32_t>(v);
}

uint32_t SdmaEngine::queue_depth(unsigned c) const {
    uint32_t head, tail, depth;
    ring_position(c, &head, &tail, &depth);
    return depth ? (tail + depth - head) % depth : 0;
}

SdmaChannelState SdmaEngine::channel(unsigned c) const {
    SdmaChannelState ch = state_.at(c);
    if (rtl_) {
        ring_position(c, &ch.head, &ch.tail, &ch.depth);
        uint64_t v = 0;
        rtl_->read(c, SdmaRegister::kRingBase, &ch.ring_base);
        rtl_->read(c, SdmaRegister::kError, &v);
        ch.error = static_cast<SdmaError>(v);
        rtl_->read(c, SdmaRegister::kCompleted, &ch.completed);
        ch.busy = rtl_->busy(c);
    }
    return ch;
}

void SdmaEngine::transport_mmio(int, tlm::tlm_generic_payload& p, sc_time& delay) {
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    if (addr < mmio_base_) return;
    const uint64_t c = (addr - mmio_base_) / stride_;
    const uint64_t reg = (addr - mmio_base_) % stride_;
    if (c >= state_.size() || len == 0 || len > 8 || reg + len > stride_) return;
    if (rtl_) return transport_mmio_rtl(static_cast<unsigned>(c), reg, p, delay);
    SdmaChannelState& ch = state_[c];
    uint64_t value = 0;
    if (p.is_write()) {
        std::memcpy(&value, p.get_data_ptr(), len);  // little-endian host
        if (reg == tail_offset_ && len == 4) {
            const Tick done = ring_doorbell(static_cast<unsigned>(c), static_cast<uint32_t>(value), now_plus(delay));
            delay = to_sc(done - sc_core::sc_time_stamp().value());
        } else if (reg == SdmaRegister::kRingBase && len == 8) {
            // (Re)creating a queue: an empty ring, a cold channel, no error.
            const uint64_t completed = ch.completed;
            ch = SdmaChannelState{};
            ch.ring_base = value;
            ch.completed = completed;
        } else if (reg == SdmaRegister::kRingDepth && len == 4) {
            ch.depth = static_cast<uint32_t>(value);
        } else {
            return;  // read-only or unknown register
        }
    } else {
        switch (reg) {
            case SdmaRegister::kHead: value = ch.head; break;
            case SdmaRegister::kRingBase: value = ch.ring_base; break;
            case SdmaRegister::kRingDepth: value = ch.depth; break;
            case SdmaRegister::kError: value = static_cast<uint32_t>(ch.error); break;
            case SdmaRegister::kCompleted: value = ch.completed; break;
            default:
                if (reg == tail_offset_) {
                    value = ch.tail;
                } else {
                    return;
                }
        }
        std::memcpy(p.get_data_ptr(), &value, len);
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

void SdmaEngine::transport_mmio_rtl(unsigned c, uint64_t reg, tlm::tlm_generic_payload& p, sc_time& delay) {
    const uint64_t len = p.get_data_length();
    uint64_t value = 0;
    if (!p.is_write()) {
        if (!rtl_->read(c, reg, &value)) return;
        std::memcpy(p.get_data_ptr(), &value, len);  // little-endian host
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    std::memcpy(&value, p.get_data_ptr(), len);
    if (reg == tail_offset_ && len == 4) {
        const Tick when = now_plus(delay);
        ++stats_.doorbells;
        uint64_t error = 0, old_tail = 0;
        rtl_->read(c, SdmaRegister::kError, &error);
        rtl_->read(c, tail_offset_, &old_tail);
        rtl_->write(c, reg, value);
        if (error == 0) {  // a stopped channel ignores its doorbell
            rtl_->read(c, SdmaRegister::kError, &error);
            if (error != 0) {
                ++stats_.channel_errors;
                idle_[c]->notify(to_sc(when - sc_core::sc_time_stamp().value()));
            } else {
                const Tick done = accept_doorbell(c, when, value != old_tail);
                const SdmaChannelState& ch = state_[c];
                rtl_->hold_until(c, std::max(ch.doorbell_arrival, ch.warm_at));
                delay = to_sc(done - sc_core::sc_time_stamp().value());
            }
        }
    } else if ((reg == SdmaRegister::kRingBase && len == 8) || (reg == SdmaRegister::kRingDepth && len == 4)) {
        if (reg == SdmaRegister::kRingBase) state_[c] = SdmaChannelState{};  // a new queue is cold
        rtl_->write(c, reg, value);
    } else {
        return;
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

Tick SdmaEngine::accept_doorbell(unsigned c, Tick when, bool submits) {
    SdmaChannelState& ch = state_[c];
    const bool set_up = submits && setup_pending_ && !ch.set_up;
    if (set_up) {
        ch.set_up = true;
        ++stats_.channel_setups;
    }
    if (ch.warm && posted_doorbells_ && !set_up) {
        ch.doorbell_arrival = when + doorbell_latency_;
        return when;
    }
    // Submission-queue publication: one doorbell at a time, engine-wide, a cold
    // channel's first paying the cold cost on top, a channel's first submission
    // its set-up; the engine sees the tail, and the doorbell write completes,
    // when it ends.
    publish_busy_until_ = std::max(publish_busy_until_, when) + doorbell_latency_ + (ch.warm ? 0 : cold_cost_) +
                          (set_up ? setup_cost_ : 0);
    ch.doorbell_arrival = publish_busy_until_;
    if (!ch.warm) {
        ch.warm = true;
        ch.warm_at = publish_busy_until_;
        ++stats_.cold_starts;
    }
    return publish_busy_until_;
}

Tick SdmaEngine::ring_doorbell(unsigned c, uint32_t tail, Tick when) {
    SdmaChannelState& ch = state_[c];
    ++stats_.doorbells;
    if (ch.error != SdmaError::None) return when;  // a stopped channel ignores its doorbell
    if (faults_.lose_doorbell && ++doorbells_seen_ == faults_.lose_doorbell) {
        SdmaFaultEvent e;
        e.kind = "doorbell-lost";
        e.channel = c;
        e.ordinal = doorbells_seen_;
        e.ring_slot = tail;
        e.ring_base = ch.ring_base;
        e.at = when;
        fault_events_.push_back(e);
        return when;  // a posted write that never arrived
    }
    if (ch.depth < 2 || ch.depth > max_depth_ || ch.ring_base == 0) {
        ch.error = SdmaError::NotConfigured;
    } else if (tail >= ch.depth) {
        ch.error = SdmaError::TailOutOfRange;
    }
    if (ch.error != SdmaError::None) {
        ++stats_.channel_errors;
        idle_[c]->notify(to_sc(when - sc_core::sc_time_stamp().value()));
        return when;
    }
    if (ch.posted_busy.size() != ch.depth) ch.posted_busy.assign(ch.depth, 0);
    for (uint32_t slot = ch.tail; slot != tail; slot = (slot + 1) % ch.depth) {
        ch.posted_busy[slot] = ch.prefetch_busy_at(sc_core::sc_time_stamp().value());
    }
    const Tick done = accept_doorbell(c, when, tail != ch.tail);
    ch.tail = tail;
    ch.busy = true;
    ch.doorbell_pending = true;
    fetch_ahead(c, ch.doorbell_arrival);
    doorbell_[c]->notify(to_sc(ch.doorbell_arrival - sc_core::sc_time_stamp().value()));
    return done;
}

void SdmaEngine::run_channel(unsigned c) {
    SdmaChannelState& ch = state_[c];
    for (;;) {
        while (!ch.doorbell_pending) sc_core::wait(*doorbell_[c]);
        ch.doorbell_pending = false;
        const Tick now = sc_core::sc_time_stamp().value();
        if (ch.warm_at > now) sc_core::wait(to_sc(ch.warm_at - now));  // still being published
        if (faults_.stall) {
            note_stall(c);
            continue;  // busy for ever: nothing is fetched
        }
        while (ch.head != ch.tail && ch.error == SdmaError::None) execute_next(c);
        if (!ch.doorbell_pending) {
            ch.busy = false;
            idle_[c]->notify();
        }
    }
}

void SdmaEngine::run_channel_rtl(unsigned c) {
    for (;;) {
        const Tick asked = sc_core::sc_time_stamp().value();
        const FrontendRequest f = rtl_->take(c);
        const Tick now = sc_core::sc_time_stamp().value();
        if (f.error != SdmaError::None) {  // the RTL stopped the channel
            ++stats_.channel_errors;
            continue;
        }
        if (!opcode(f.request.opcode)) {  // the RTL's decode and the engine's table must agree
            throw std::logic_error("pfsim: the RTL SDMA front-end passed opcode " + std::to_string(f.request.opcode) +
                                   ", which the engine does not implement");
        }
        // Taken up as the TLM front-end takes it: once asked for, its doorbell
        // arrived and its channel published.
        const SdmaChannelState& ch = state_[c];
        wait_to_begin(c, f.request, std::max({asked, ch.doorbell_arrival, ch.warm_at}), now);
        move(c, f.request, now);
        rtl_->retire(c);
    }
}

const SdmaEngine::Opcode SdmaEngine::kOpcodes[] = {
    {kSdmaOpCopy, "copy", true, true, &SdmaEngine::copy_piece, &SdmaStats::copy_requests, &SdmaStats::copy_bytes},
    {kSdmaOpCachePrefetch, "prefetch", false, false, &SdmaEngine::prefetch_piece, &SdmaStats::prefetch_requests,
     &SdmaStats::prefetch_bytes},
};

const SdmaEngine::Opcode* SdmaEngine::opcode(uint8_t code) {
    for (const Opcode& op : kOpcodes) {
        if (op.code == code) return &op;
    }
    return nullptr;
}

SdmaError SdmaEngine::validate(const SdmaRequest& r) const {
    auto outside = [this](uint64_t a, uint64_t n) { return a > gm_size_ || n > gm_size_ - a; };
    if (r.type != kSdmaType) return SdmaError::BadType;
    const Opcode* op = opcode(r.opcode);
    if (!op) return SdmaError::BadOpcode;
    if (r.length == 0) return SdmaError::ZeroLength;
    if (r.length > max_request_bytes_) return SdmaError::Oversized;
    // A copy may read or write a peer die's GM through the link; a prefetch fills this die's L2 from its own GM.
    auto unreachable = [&](uint64_t a, uint64_t n) {
        return outside(a, n) && !(op->writes_destination && peer_reach_ && in_peer_window(a) && peer_reach_(a, n));
    };
    if (unreachable(r.src, r.length)) return SdmaError::SourceOutsideGm;
    if (op->writes_destination && unreachable(r.dst, r.length)) return SdmaError::DestinationOutsideGm;
    return SdmaError::None;
}

std::optional<Tick> SdmaEngine::memory_access(bool write, uint64_t addr, uint8_t* buf, uint64_t len,
                                              Tick issue) {
    prepare_payload(payload_, write, addr, buf, len);
    const Tick done = in_peer_window(addr) ? transport_at(peers, payload_, issue) : transport_at(memory, payload_, issue);
    if (payload_.is_response_error()) return std::nullopt;
    return done;
}

Tick SdmaEngine::reserve_bandwidth(unsigned c, uint64_t bytes, Tick start, uint64_t resident) {
    const Tick checked = transfer_time(resident, resident_check_bw_);
    Tick work = transfer_time(bytes - resident, aggregate_bw_) + checked;
    // The engine serves one channel's piece at a time; turning to another
    // channel's request while the previous channel is still moving data costs
    // the switch (the second stream of two halves the aggregate, not adds).
    if (c != last_channel_ && start < last_piece_done_) {
        work += switch_cost_;
        ++stats_.channel_switches;
    }
    last_channel_ = c;
    const Tick shared = aggregate_.reserve(start, work);
    last_piece_done_ = std::max(last_piece_done_, shared + switch_cost_);
    return std::max(start + transfer_time(bytes - resident, channel_bw_) + checked, shared);
}

uint64_t SdmaEngine::resident_bytes(uint64_t addr, uint64_t len) {
    prepare_payload(payload_, false, addr, nullptr, len);
    PrefetchPacing probe;
    probe.probe = true;
    payload_.set_extension(&probe);
    sc_time delay = sc_core::SC_ZERO_TIME;
    prefetch->b_transport(payload_, delay);
    payload_.clear_extension(&probe);
    return payload_.is_response_ok() ? probe.resident_bytes : 0;
}

Tick SdmaEngine::fill_l2(uint64_t addr, uint64_t len, Tick engine_done) {
    prepare_payload(payload_, false, addr, nullptr, len);
    PrefetchPacing pacing;
    pacing.engine_done = engine_done;
    payload_.set_extension(&pacing);
    sc_time delay = sc_core::SC_ZERO_TIME;
    prefetch->b_transport(payload_, delay);
    payload_.clear_extension(&pacing);
    return sc_core::sc_time_stamp().value() + delay.value();
}

void SdmaEngine::execute_next(unsigned c) {
    SdmaChannelState& ch = state_[c];
    const Tick now = sc_core::sc_time_stamp().value();
    uint8_t raw[kSdmaRequestBytes];
    std::optional<Tick> fetched;
    if (ch.ahead_index == static_cast<int64_t>(ch.head)) {  // fetched while the previous request ran
        std::memcpy(raw, ch.ahead_raw, kSdmaRequestBytes);
        fetched = std::max(now, ch.ahead_fetched);
    } else {
        fetched = memory_access(false, ch.ring_base + uint64_t{ch.head} * kSdmaRequestBytes, raw, kSdmaRequestBytes,
                                std::max(now, ch.doorbell_arrival));
        stats_.request_fetch_bytes += kSdmaRequestBytes;
    }
    ch.ahead_index = -1;
    const SdmaRequest r = SdmaRequest::decode(raw);
    ch.error = fetched ? validate(r) : SdmaError::RingOutsideGm;
    if (ch.error == SdmaError::None && faults_.error_at_request && ++requests_taken_ == faults_.error_at_request) {
        ch.error = SdmaError::InjectedFault;
        SdmaFaultEvent e;
        e.kind = "sdma-error";
        e.channel = c;
        e.ordinal = requests_taken_;
        e.ring_slot = ch.head;
        e.ring_base = ch.ring_base;
        e.at = *fetched;
        e.request = r;
        fault_events_.push_back(e);
    }
    if (ch.error != SdmaError::None) {
        ++stats_.channel_errors;
        return;
    }
    // A copy between dies waits for the prefetches posted before it in its
    // ring: their data moved (the channel's prefetch time since it was posted),
    // then their lines landed (its order after them).
    const bool comm = opcode(r.opcode)->writes_destination && (in_peer_window(r.src) || in_peer_window(r.dst));
    if (comm) {
        ++stats_.comm_copies;
        const Tick busy = ch.prefetch_busy_at(now);
        if (ch.head < ch.posted_busy.size() && busy > ch.posted_busy[ch.head]) {
            stats_.comm_prefetch_wait += busy - ch.posted_busy[ch.head];
        }
    }
    ch.executing = true;
    const bool prefetch = r.opcode == kSdmaOpCachePrefetch;
    if (prefetch) {  // the channel's time on prefetches, from taking one up to its end
        ch.in_prefetch = true;
        ch.prefetch_started = now;
    }
    fetch_ahead(c, *fetched);
    const Tick landing = wait_to_begin(c, r, std::max(now, ch.doorbell_arrival), *fetched);
    if (comm) stats_.comm_prefetch_wait += landing;
    move(c, r, now);
    if (prefetch) {
        ch.prefetch_busy = ch.prefetch_busy_at(sc_core::sc_time_stamp().value());
        ch.in_prefetch = false;
    }
    ch.executing = false;
    ++ch.completed;
    ch.head = (ch.head + 1) % ch.depth;
}

void SdmaEngine::note_stall(unsigned c) {
    for (const SdmaFaultEvent& e : fault_events_) {
        if (e.channel == c) return;
    }
    SdmaFaultEvent e;
    e.kind = "sdma-stall";
    e.channel = c;
    e.ring_slot = state_[c].head;
    e.ring_base = state_[c].ring_base;
    e.at = sc_core::sc_time_stamp().value();
    fault_events_.push_back(e);
}

void SdmaEngine::fetch_ahead(unsigned c, Tick when) {
    SdmaChannelState& ch = state_[c];
    const uint32_t following = (ch.head + 1) % ch.depth;
    if (!ch.executing || ch.ahead_index >= 0 || following == ch.tail) return;
    const std::optional<Tick> f = memory_access(false, ch.ring_base + uint64_t{following} * kSdmaRequestBytes,
                                                ch.ahead_raw, kSdmaRequestBytes, std::max(when, ch.doorbell_arrival));
    stats_.request_fetch_bytes += kSdmaRequestBytes;
    if (f) {
        ch.ahead_index = following;
        ch.ahead_fetched = *f;
    }
}

Tick SdmaEngine::wait_to_begin(unsigned c, const SdmaRequest& r, Tick taken, Tick fetched) {
    // The start-up (sdma.request_startup: fetch, decode, burst start, as the
    // published per-request cost counts them) runs from when the channel takes
    // the request up; a fetch that takes longer delays it. A copy (the
    // completion flag) also waits until every earlier prefetched line has landed.
    const Tick ready = std::max(fetched, taken + startup_);
    Tick begin = ready;
    if (opcode(r.opcode)->ordered_after_fills) begin = std::max(begin, state_[c].fills_done);
    sc_core::wait(to_sc(begin - sc_core::sc_time_stamp().value()));
    return begin - ready;
}

Tick SdmaEngine::prefetch_piece(unsigned, const SdmaRequest& r, uint64_t off, uint64_t n, Tick, Tick paced) {
    return fill_l2(r.src + off, n, paced);
}

Tick SdmaEngine::copy_piece(unsigned c, const SdmaRequest& r, uint64_t off, uint64_t n, Tick t, Tick) {
    // Both ranges were validated, so these accesses cannot fail. The bytes are
    // written, and visible, once they have been read.
    std::vector<uint8_t>& piece = copy_buffer_[c];
    piece.resize(chunk_bytes_);
    const Tick read = *memory_access(false, r.src + off, piece.data(), n, t);
    if (read > t) sc_core::wait(to_sc(read - t));
    return *memory_access(true, r.dst + off, piece.data(), n, read);
}

void SdmaEngine::move(unsigned c, const SdmaRequest& r, Tick started) {
    SdmaChannelState& ch = state_[c];
    const Opcode& op = *opcode(r.opcode);  // validated (by the engine or the RTL front-end)
    // Data moves one piece at a time, so that each reservation of GM, L2 and
    // engine bandwidth is made when it happens and channels interleave fairly.
    Tick done = sc_core::sc_time_stamp().value();
    Tick engine_wait = 0;  // traced: beyond the pieces' own transfer time (other channels' pieces, the switches to them)
    for (uint64_t off = 0; off < r.length;) {
        const uint64_t n = std::min(chunk_bytes_ - (r.src + off) % chunk_bytes_, uint64_t{r.length} - off);
        const Tick t = sc_core::sc_time_stamp().value();
        const uint64_t resident = op.writes_destination ? 0 : resident_bytes(r.src + off, n);
        stats_.resident_check_bytes += resident;
        const Tick paced = reserve_bandwidth(c, n, t, resident);
        if (trace_) {
            const Tick alone = t + std::max(transfer_time(n, channel_bw_), transfer_time(n, aggregate_bw_));
            if (paced > alone) engine_wait += paced - alone;
        }
        done = std::max({done, (this->*op.piece)(c, r, off, n, t, paced), paced});
        const Tick moved = sc_core::sc_time_stamp().value();
        if (paced > moved) sc_core::wait(to_sc(paced - moved));
        off += n;
    }
    ++(stats_.*op.requests);
    stats_.*op.bytes += r.length;
    // The next request may start once this one's bytes are moved; its lines may
    // still be landing in L2 (a later copy, the completion flag, waits for them).
    ch.fills_done = std::max(ch.fills_done, done);
    if (op.ordered_after_fills) {
        const Tick moved = sc_core::sc_time_stamp().value();
        if (done > moved) sc_core::wait(to_sc(done - moved));
    }
    const Tick finished = sc_core::sc_time_stamp().value();
    if (trace_) {
        if (!trace_pid_) {
            trace_pid_ = trace_->process("SDMA engine", 1);
            trace_lane_.assign(state_.size(), 0);
        }
        if (!trace_lane_[c]) trace_lane_[c] = trace_->lane(trace_pid_, "channel " + std::to_string(c), static_cast<int>(c));
        char args[240];
        int at = std::snprintf(args, sizeof args, "\"bytes\":%u,\"src\":\"0x%llx\",\"dst\":\"0x%llx\"", r.length,
                               static_cast<unsigned long long>(r.src), static_cast<unsigned long long>(r.dst));
        // A copy between dies (communication: TGET_ASYNC, TPUT_ASYNC) is told
        // from a prefetch and from a copy within the die by its name, with the
        // peer's rank and how long its pieces waited for the engine.
        const bool get = in_peer_window(r.src), put = op.writes_destination && in_peer_window(r.dst);
        if (get || put) {
            std::snprintf(args + at, sizeof args - static_cast<size_t>(at), ",\"rank\":%u,\"engine_wait_ns\":%.3f",
                          peer_rank(get ? r.src : r.dst), static_cast<double>(engine_wait) / 1000.0);
        }
        trace_->slice(trace_pid_, trace_lane_[c], get ? "peer get" : put ? "peer put" : op.name, started, finished, args);
    }
    ++stats_.requests;
    ch.last_done = done;
    if (log_) log_->push_back({c, r, started, finished});
}

}  // namespace pfsim

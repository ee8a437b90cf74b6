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
#include "model/sdma/tlm_frontend.h"

namespace pfsim {

using sc_core::sc_time;

std::unique_ptr<SdmaFrontend> make_sdma_frontend(const Config& cfg, const std::string& waves) {
    if (cfg.choice("sdma.frontend") == "rtl") return make_rtl_frontend(cfg, waves);
    if (!waves.empty()) throw std::invalid_argument("SDMA waves need sdma.frontend = rtl");
    return std::make_unique<TlmFrontend>(cfg);
}

SdmaEngine::SdmaEngine(sc_core::sc_module_name name, const Config& cfg, std::unique_ptr<SdmaFrontend> frontend)
    : sc_module(name),
      mmio("mmio"),
      memory("memory"),
      prefetch("prefetch"),
      peers("peers"),
      mmio_base_(cfg.bytes("sdma.mmio_base")),
      stride_(cfg.bytes("sdma.doorbell_stride")),
      tail_offset_(cfg.bytes("sdma.doorbell_tail_offset")),
      gm_size_(cfg.bytes("gm.size")),
      max_request_bytes_(cfg.bytes("sdma.max_request_bytes")),
      chunk_bytes_(cfg.bytes("sdma.chunk_bytes")),
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
      frontend_(std::move(frontend)),
      timing_(cfg.count("sdma.channels")),
      copy_buffer_(timing_.size()) {
    mmio.register_b_transport(this, &SdmaEngine::transport_mmio);
    frontend_->connect(this);
    if (frontend_->clocked()) sc_core::sc_spawn([this] { frontend_->run(); }, "frontend_clock");
    for (unsigned c = 0; c < timing_.size(); ++c) {
        idle_.push_back(std::make_unique<sc_core::sc_event>());
        sc_core::sc_spawn([this, c] { run_channel(c); }, sc_core::sc_gen_unique_name("channel"));
    }
}

uint32_t SdmaEngine::queue_depth(unsigned c) const {
    const SdmaRing r = frontend_->ring(c);
    return r.depth ? (r.tail + r.depth - r.head) % r.depth : 0;
}

SdmaChannelState SdmaEngine::channel(unsigned c) const {
    SdmaChannelState ch;
    static_cast<SdmaRing&>(ch) = frontend_->ring(c);
    ch.last_done = timing_.at(c).last_done;
    return ch;
}

void SdmaEngine::transport_mmio(int, tlm::tlm_generic_payload& p, sc_time& delay) {
    const uint64_t addr = p.get_address();
    const unsigned len = p.get_data_length();
    p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
    if (addr < mmio_base_) return;
    const uint64_t c = (addr - mmio_base_) / stride_;
    const uint64_t reg = (addr - mmio_base_) % stride_;
    if (c >= timing_.size() || len == 0 || len > 8 || reg + len > stride_) return;
    uint64_t value = 0;
    if (!p.is_write()) {
        if (!frontend_->read(static_cast<unsigned>(c), reg, len, &value)) return;
        std::memcpy(p.get_data_ptr(), &value, len);  // little-endian host
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    std::memcpy(&value, p.get_data_ptr(), len);
    Tick done = 0;
    switch (frontend_->write(static_cast<unsigned>(c), reg, len, value, now_plus(delay), &done)) {
        case SdmaFrontend::Write::Refused:
            return;
        case SdmaFrontend::Write::Doorbell:
            ++stats_.doorbells;
            delay = to_sc(done - sc_core::sc_time_stamp().value());
            break;
        case SdmaFrontend::Write::NewQueue:
            timing_[c] = Channel{};  // a new queue is cold
            break;
        case SdmaFrontend::Write::Register:
            break;
    }
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

std::optional<Tick> SdmaEngine::fetch_request(uint64_t addr, uint8_t* entry, Tick issue) {
    stats_.request_fetch_bytes += kSdmaRequestBytes;
    return memory_access(false, addr, entry, kSdmaRequestBytes, issue);
}

void SdmaEngine::stopped(unsigned c, Tick when) {
    ++stats_.channel_errors;
    idle_[c]->notify(to_sc(when - sc_core::sc_time_stamp().value()));
}

SdmaBackend::Publication SdmaEngine::publish(unsigned c, Tick when, uint32_t posted) {
    Channel& ch = timing_[c];
    const Tick now = sc_core::sc_time_stamp().value();
    ch.posted_busy.insert(ch.posted_busy.end(), posted, ch.prefetch_busy_at(now));
    const bool set_up = posted && setup_pending_ && !ch.set_up;
    if (set_up) {
        ch.set_up = true;
        ++stats_.channel_setups;
    }
    if (ch.warm && posted_doorbells_ && !set_up) {
        ch.doorbell_arrival = when + doorbell_latency_;
        return {when, ch.doorbell_arrival, ch.warm_at};
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
    return {publish_busy_until_, ch.doorbell_arrival, ch.warm_at};
}

void SdmaEngine::run_channel(unsigned c) {
    Channel& ch = timing_[c];
    for (;;) {
        const FrontendRequest f = frontend_->take(c);
        const Tick now = sc_core::sc_time_stamp().value();
        Tick posted_busy = 0;
        const bool posted_known = !ch.posted_busy.empty();
        if (posted_known) {
            posted_busy = ch.posted_busy.front();
            ch.posted_busy.pop_front();
        }
        if (f.error != SdmaError::None) {  // the front-end stopped the channel
            ++stats_.channel_errors;
            continue;
        }
        const SdmaRequest& r = f.request;
        if (!opcode(r.opcode)) {  // the RTL's decode and the engine's table must agree
            throw std::logic_error("pfsim: the SDMA front-end passed opcode " + std::to_string(r.opcode) +
                                   ", which the engine does not implement");
        }
        // A copy between dies waits for the prefetches posted before it in its
        // ring: their data moved (the channel's prefetch time since it was posted),
        // then their lines landed (its order after them).
        const bool comm = opcode(r.opcode)->writes_destination && (in_peer_window(r.src) || in_peer_window(r.dst));
        if (comm) {
            ++stats_.comm_copies;
            const Tick busy = ch.prefetch_busy_at(now);
            if (posted_known && busy > posted_busy) stats_.comm_prefetch_wait += busy - posted_busy;
        }
        const bool prefetch = r.opcode == kSdmaOpCachePrefetch;
        if (prefetch) {  // the channel's time on prefetches, from taking one up to its end
            ch.in_prefetch = true;
            ch.prefetch_started = now;
        }
        const Tick landing = wait_to_begin(c, r, f.taken, f.fetched);
        if (comm) stats_.comm_prefetch_wait += landing;
        move(c, r, now);
        if (prefetch) {
            ch.prefetch_busy = ch.prefetch_busy_at(sc_core::sc_time_stamp().value());
            ch.in_prefetch = false;
        }
        frontend_->retire(c);
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

SdmaError SdmaEngine::refusal(const SdmaRequest& r) const {
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

Tick SdmaEngine::wait_to_begin(unsigned c, const SdmaRequest& r, Tick taken, Tick fetched) {
    // The start-up (sdma.request_startup: fetch, decode, burst start, as the
    // published per-request cost counts them) runs from when the channel takes
    // the request up; a fetch that takes longer delays it. A copy (the
    // completion flag) also waits until every earlier prefetched line has landed.
    const Tick ready = std::max(fetched, taken + startup_);
    Tick begin = ready;
    if (opcode(r.opcode)->ordered_after_fills) begin = std::max(begin, timing_[c].fills_done);
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
    Channel& ch = timing_[c];
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
            trace_lane_.assign(timing_.size(), 0);
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

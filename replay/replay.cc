#include "replay/replay.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "hw/sdma_request.h"
#include "model/common/payload.h"
#include "model/common/time.h"

namespace pfsim {

namespace {
constexpr unsigned kChannel = 0;
constexpr uint64_t kPatternPeriod = 4096;
constexpr uint64_t kHintAhead = 8;
}  // namespace

uint64_t Replay::ring_base(const Config& cfg) {
    const uint64_t ring_bytes = cfg.count("sdma.queue_depth") * kSdmaRequestBytes;
    return (cfg.bytes("gm.size") - ring_bytes) / 4096 * 4096;
}

Replay::Replay(sc_core::sc_module_name name, const Config& cfg, Soc& soc, TraceReader& trace,
               const ReplayOptions& options)
    : sc_module(name),
      cached("cached"),
      uncached("uncached"),
      mmio("mmio"),
      soc_(soc),
      trace_(trace),
      options_(options),
      line_bytes_(cfg.bytes("l2.line_bytes")),
      request_bytes_(cfg.bytes("prefetch.request_bytes")),
      ring_base_(ring_base(cfg)),
      depth_(static_cast<uint32_t>(cfg.count("sdma.queue_depth"))),
      reference_(cfg.bytes("gm.size"), BackingStore::host_pages(cfg.choice("gm.host_pages"))),
      sampler_("sampler", soc, options.sample_interval) {
    if (options_.trace) {
        soc.sdma.attach_trace(options_.trace);
        sampler_.attach_trace(options_.trace);
        trace_pid_ = options_.trace->process("replay", 2);
        trace_lane_ = options_.trace->lane(trace_pid_, "accesses", 0);
    }
    // Every writer of GM here goes through the model (no kernel runs): never-written
    // GM reads as zeros without host memory behind it.
    soc.gm.store().read_unwritten_as_zero();
    // The replay is the L2's only cached initiator and waits for each access.
    soc.l2.promise_one_sequential_initiator();
    reference_.read_unwritten_as_zero();
    cached.bind(soc.l2.cached);
    uncached.bind(soc.l2.uncached);
    mmio.bind(soc.sdma.mmio);
    SC_HAS_PROCESS(Replay);
    SC_THREAD(run);
}

void Replay::transport(tlm_utils::simple_initiator_socket<Replay>& socket, bool write, uint64_t addr,
                       void* data, uint64_t len) {
    // A payload's length is 32 bits: a longer access goes in pieces, one after the other.
    constexpr uint64_t kPiece = uint64_t{1} << 31;
    for (; len > kPiece; addr += kPiece, len -= kPiece) {
        transport(socket, write, addr, data, kPiece);
        if (data) data = static_cast<uint8_t*>(data) + kPiece;
    }
    prepare_payload(payload_, write, addr, data, len);
    sc_core::sc_time delay = keeper_.get_local_time();
    socket->b_transport(payload_, delay);
    if (payload_.is_response_error()) {
        std::ostringstream os;
        os << "replay: the model refused the access at 0x" << std::hex << addr;
        throw std::runtime_error(os.str());
    }
    keeper_.set(delay);
    if (keeper_.need_sync()) keeper_.sync();
}

void Replay::mmio_write(uint64_t addr, uint64_t value, unsigned bytes) {
    transport(mmio, true, addr, &value, bytes);
}

void Replay::wait_channel_idle() {
    keeper_.sync();
    while (soc_.sdma.channel(kChannel).busy) wait(soc_.sdma.idle_event(kChannel));
}

void Replay::run() {
    tlm::tlm_global_quantum::instance().set(sc_core::sc_time(10, sc_core::SC_US));
    keeper_.reset();
    // Program channel 0's ring and warm the channel (a doorbell with an unchanged tail).
    mmio_write(soc_.sdma.register_address(kChannel, SdmaRegister::kRingBase), ring_base_, 8);
    mmio_write(soc_.sdma.register_address(kChannel, SdmaRegister::kRingDepth), depth_, 4);
    mmio_write(soc_.sdma.doorbell_address(kChannel), tail_, 4);
    wait_channel_idle();
    const Tick start = sc_core::sc_time_stamp().value();
    running_ = true;
    sampler_.start([this] { return running_; });
    try {
        replay_all();
    } catch (const TraceError& e) {
        result_.trace_error = e.what();
    }
    keeper_.sync();
    result_.sim_time = sc_core::sc_time_stamp().value() - start;
    running_ = false;
}

void Replay::replay_all() {
    uint64_t index = 0;
    uint64_t next_percent = 5;
    for (;;) {
        const std::vector<TraceAccess>& chunk = trace_.next();
        if (chunk.empty()) return;
        for (size_t i = 0; i < chunk.size(); ++i) {
            // The trace is known ahead: the host loads the L2 state of the access
            // kHintAhead later while this one runs (a random trace misses the
            // host's caches on nearly every set).
            if (i + kHintAhead < chunk.size()) soc_.l2.warm_host_cache(chunk[i + kHintAhead].addr);
            access(chunk[i], index++);
            if (!result_.error.empty()) return;
        }
        if (options_.progress) progress(index, &next_percent);
    }
}

// A line each 5 % of the trace file, or each 2^20 accesses when its size is unknown (a pipe).
void Replay::progress(uint64_t accesses, uint64_t* next_percent) const {
    if (trace_.file_bytes() == 0) {
        if (accesses % (uint64_t{1} << 20) == 0) {
            std::fprintf(stderr, "replay: %llu accesses\n", static_cast<unsigned long long>(accesses));
        }
        return;
    }
    const uint64_t percent = trace_.bytes_handed_out() * 100 / trace_.file_bytes();
    if (percent < *next_percent) return;
    std::fprintf(stderr, "replay: %3llu%% of the trace read (%llu accesses)\n", static_cast<unsigned long long>(percent),
                 static_cast<unsigned long long>(accesses));
    *next_percent = percent / 5 * 5 + 5;
}

// Deterministic write data: access k writes the pattern from offset k mod period;
// grown (the same bytes, continued) when a longer access comes.
void Replay::grow_pattern(uint64_t bytes) {
    const size_t old = pattern_.size();
    pattern_.resize(bytes + kPatternPeriod);
    for (size_t i = old; i < pattern_.size(); ++i) {
        pattern_state_ = pattern_state_ * 6364136223846793005ull + 1442695040888963407ull;
        pattern_[i] = static_cast<uint8_t>(pattern_state_ >> 56);
    }
    scratch_.resize(bytes);
    expected_.resize(bytes);
}

void Replay::access(const TraceAccess& a, uint64_t index) {
    const Tick begin = sc_core::sc_time_stamp().value() + keeper_.get_local_time().value();
    perform(a, index);
    if (options_.trace) {
        static const char* names[] = {"R", "W", "P"};
        char args[96];
        std::snprintf(args, sizeof args, "\"addr\":\"0x%llx\",\"bytes\":%llu",
                      static_cast<unsigned long long>(a.addr), static_cast<unsigned long long>(a.bytes));
        options_.trace->slice(trace_pid_, trace_lane_, names[a.op], begin,
                              sc_core::sc_time_stamp().value() + keeper_.get_local_time().value(), args);
    }
}

void Replay::perform(const TraceAccess& a, uint64_t index) {
    ++result_.accesses;
    if (a.op == TraceAccess::Prefetch) {
        prefetch(a);
        return;
    }
    result_.line_accesses += (a.addr + a.bytes - 1) / line_bytes_ - a.addr / line_bytes_ + 1;
    if (!options_.verify) {  // nothing observes the bytes: timed and counted without moving them
        transport(cached, a.op == TraceAccess::Write, a.addr, nullptr, a.bytes);
        return;
    }
    if (a.bytes > scratch_.size()) grow_pattern(a.bytes);
    if (a.op == TraceAccess::Write) {
        uint8_t* data = pattern_.data() + index % kPatternPeriod;
        transport(cached, true, a.addr, data, a.bytes);
        reference_.write(a.addr, data, a.bytes);
        return;
    }
    transport(cached, false, a.addr, scratch_.data(), a.bytes);
    reference_.read(a.addr, expected_.data(), a.bytes);
    if (std::memcmp(expected_.data(), scratch_.data(), a.bytes) != 0) {
        if (result_.mismatches++ == 0) {
            uint64_t i = 0;
            while (expected_[i] == scratch_[i]) ++i;
            std::ostringstream os;
            os << "access " << index + 1 << " (R 0x" << std::hex << a.addr << std::dec << " " << a.bytes
               << "): byte at 0x" << std::hex << a.addr + i << " read 0x" << int(scratch_[i])
               << ", expected 0x" << int(expected_[i]);
            result_.first_mismatch = os.str();
        }
    }
}

void Replay::prefetch(const TraceAccess& a) {
    uint64_t addr = a.addr;
    const uint64_t end = a.addr + a.bytes;
    while (addr < end) {
        // At most depth - 1 requests in the ring at once.
        for (uint32_t n = 0; n + 1 < depth_ && addr < end; ++n) {
            const uint64_t len = std::min(request_bytes_, end - addr);
            uint8_t raw[kSdmaRequestBytes];
            SdmaRequest r = SdmaRequest::cache_prefetch(addr, static_cast<uint32_t>(len));
            r.task_id = static_cast<uint16_t>(n);
            r.encode(raw);
            transport(uncached, true, ring_base_ + uint64_t{tail_} * kSdmaRequestBytes, raw,
                      kSdmaRequestBytes);
            tail_ = (tail_ + 1) % depth_;
            addr += len;
        }
        mmio_write(soc_.sdma.doorbell_address(kChannel), tail_, 4);
        wait_channel_idle();
        const SdmaError e = soc_.sdma.channel(kChannel).error;
        if (e != SdmaError::None) {
            result_.error = std::string("SDMA channel 0 stopped: ") + sdma_error_name(e);
            return;
        }
    }
}

}  // namespace pfsim

#include "model/sdma/tlm_frontend.h"

#include <algorithm>
#include <cstring>

namespace pfsim {

TlmFrontend::TlmFrontend(const Config& cfg)
    : tail_offset_(cfg.bytes("sdma.doorbell_tail_offset")),
      max_depth_(static_cast<uint32_t>(cfg.count("sdma.queue_depth"))),
      channels_(cfg.count("sdma.channels")) {
    for (size_t c = 0; c < channels_.size(); ++c) doorbell_.push_back(std::make_unique<sc_core::sc_event>());
}

bool TlmFrontend::read(unsigned c, uint64_t reg, unsigned, uint64_t* value) {
    const SdmaRing& r = channels_.at(c).ring;
    switch (reg) {
        case SdmaRegister::kHead: *value = r.head; return true;
        case SdmaRegister::kRingBase: *value = r.ring_base; return true;
        case SdmaRegister::kRingDepth: *value = r.depth; return true;
        case SdmaRegister::kError: *value = static_cast<uint32_t>(r.error); return true;
        case SdmaRegister::kCompleted: *value = r.completed; return true;
        default:
            *value = r.tail;
            return reg == tail_offset_;
    }
}

SdmaFrontend::Write TlmFrontend::write(unsigned c, uint64_t reg, unsigned bytes, uint64_t value, Tick when,
                                       Tick* done) {
    Channel& ch = channels_.at(c);
    *done = when;
    if (reg == tail_offset_ && bytes == 4) {
        *done = ring_doorbell(c, static_cast<uint32_t>(value), when);
        return Write::Doorbell;
    }
    if (reg == SdmaRegister::kRingBase && bytes == 8) {
        // (Re)creating a queue: an empty ring, no error; its channel's process
        // stays where it is.
        const uint64_t completed = ch.ring.completed;
        const bool draining = ch.draining;
        ch = Channel{};
        ch.ring.ring_base = value;
        ch.ring.completed = completed;
        ch.draining = draining;
        return Write::NewQueue;
    }
    if (reg == SdmaRegister::kRingDepth && bytes == 4) {
        ch.ring.depth = static_cast<uint32_t>(value);
        return Write::Register;
    }
    return Write::Refused;  // read-only or unknown
}

Tick TlmFrontend::ring_doorbell(unsigned c, uint32_t tail, Tick when) {
    Channel& ch = channels_[c];
    SdmaRing& r = ch.ring;
    if (r.error != SdmaError::None) return when;  // a stopped channel ignores its doorbell
    if (faults_.lose_doorbell && ++doorbells_seen_ == faults_.lose_doorbell) {
        SdmaFaultEvent e;
        e.kind = "doorbell-lost";
        e.channel = c;
        e.ordinal = doorbells_seen_;
        e.ring_slot = tail;
        e.ring_base = r.ring_base;
        e.at = when;
        fault_events_.push_back(e);
        return when;  // a posted write that never arrived
    }
    if (r.depth < 2 || r.depth > max_depth_ || r.ring_base == 0) {
        r.error = SdmaError::NotConfigured;
    } else if (tail >= r.depth) {
        r.error = SdmaError::TailOutOfRange;
    }
    if (r.error != SdmaError::None) {
        engine_->stopped(c, when);
        return when;
    }
    const SdmaBackend::Publication p = engine_->publish(c, when, (tail + r.depth - r.tail) % r.depth);
    ch.seen = p.seen;
    ch.published = p.published;
    r.tail = tail;
    r.busy = true;
    ch.doorbell_pending = true;
    fetch_ahead(c, ch.seen);
    doorbell_[c]->notify(to_sc(ch.seen - sc_core::sc_time_stamp().value()));
    return p.write_done;
}

FrontendRequest TlmFrontend::take(unsigned c) {
    Channel& ch = channels_.at(c);
    for (;;) {
        if (ch.draining) {
            if (ch.ring.head != ch.ring.tail && ch.ring.error == SdmaError::None) return fetch_head(c);
            ch.draining = false;
            if (!ch.doorbell_pending) {
                ch.ring.busy = false;
                engine_->idle(c);
            }
        }
        while (!ch.doorbell_pending) sc_core::wait(*doorbell_[c]);
        ch.doorbell_pending = false;
        const Tick now = sc_core::sc_time_stamp().value();
        if (ch.published > now) sc_core::wait(to_sc(ch.published - now));  // still being published
        if (faults_.stall) {
            note_stall(c);
            continue;  // busy for ever: nothing is fetched
        }
        ch.draining = true;
    }
}

FrontendRequest TlmFrontend::fetch_head(unsigned c) {
    Channel& ch = channels_[c];
    SdmaRing& ring = ch.ring;
    const Tick now = sc_core::sc_time_stamp().value();
    uint8_t entry[kSdmaRequestBytes];
    std::optional<Tick> fetched;
    if (ch.ahead_index == static_cast<int64_t>(ring.head)) {  // fetched while the previous request ran
        std::memcpy(entry, ch.ahead_entry, kSdmaRequestBytes);
        fetched = std::max(now, ch.ahead_fetched);
    } else {
        fetched = engine_->fetch_request(ring.ring_base + uint64_t{ring.head} * kSdmaRequestBytes, entry,
                                         std::max(now, ch.seen));
    }
    ch.ahead_index = -1;
    FrontendRequest f;
    f.request = SdmaRequest::decode(entry);
    f.taken = std::max(now, ch.seen);
    f.fetched = fetched.value_or(now);
    ring.error = fetched ? engine_->refusal(f.request) : SdmaError::RingOutsideGm;
    if (ring.error == SdmaError::None && faults_.error_at_request && ++requests_taken_ == faults_.error_at_request) {
        ring.error = SdmaError::InjectedFault;
        SdmaFaultEvent e;
        e.kind = "sdma-error";
        e.channel = c;
        e.ordinal = requests_taken_;
        e.ring_slot = ring.head;
        e.ring_base = ring.ring_base;
        e.at = *fetched;
        e.request = f.request;
        fault_events_.push_back(e);
    }
    f.error = ring.error;
    if (f.error == SdmaError::None) {
        ch.executing = true;
        fetch_ahead(c, f.fetched);
    }
    return f;
}

void TlmFrontend::retire(unsigned c) {
    Channel& ch = channels_.at(c);
    ch.executing = false;
    ++ch.ring.completed;
    ch.ring.head = (ch.ring.head + 1) % ch.ring.depth;
}

void TlmFrontend::fetch_ahead(unsigned c, Tick when) {
    Channel& ch = channels_[c];
    const SdmaRing& ring = ch.ring;
    if (!ch.executing || ch.ahead_index >= 0) return;
    const uint32_t following = (ring.head + 1) % ring.depth;
    if (following == ring.tail) return;
    const std::optional<Tick> f = engine_->fetch_request(ring.ring_base + uint64_t{following} * kSdmaRequestBytes,
                                                         ch.ahead_entry, std::max(when, ch.seen));
    if (f) {
        ch.ahead_index = following;
        ch.ahead_fetched = *f;
    }
}

void TlmFrontend::inject(const SdmaFaults& faults) {
    faults_ = faults;
    requests_taken_ = doorbells_seen_ = 0;
    fault_events_.clear();
}

void TlmFrontend::note_stall(unsigned c) {
    for (const SdmaFaultEvent& e : fault_events_) {
        if (e.channel == c) return;
    }
    SdmaFaultEvent e;
    e.kind = "sdma-stall";
    e.channel = c;
    e.ring_slot = channels_[c].ring.head;
    e.ring_base = channels_[c].ring.ring_base;
    e.at = sc_core::sc_time_stamp().value();
    fault_events_.push_back(e);
}

}  // namespace pfsim

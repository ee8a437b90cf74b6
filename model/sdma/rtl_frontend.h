// The SDMA engine's front-end (registers, doorbells, arbitration, request fetch
// and decode) answered by the RTL of rtl_stubs/sdma_frontend, with
// --set sdma.frontend=rtl. The engine keeps executing requests; this bridge
// turns register accesses, fetches and hand-overs into pin activity:
//   - register accesses are applied on a clock edge at once;
//   - a clock process steps the RTL one cycle at a time while it has work and
//     sleeps otherwise (the RTL holds state only in registers, so skipping idle
//     cycles changes nothing);
//   - the RTL's memory requests become TLM reads; each answer is presented on
//     the first cycle at or after the read completes;
//   - a channel process asking for its next request gets it on the take port.
#pragma once

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "hw/sdma_request.h"
#include "model/common/time.h"
#include "model/config/config.h"
#include "model/sdma/sdma_frontend.h"
#include "rtl_stubs/clocked_model.h"

namespace pfsim {

template <class Model, class Tracer>
class RtlFrontendOf final : public SdmaFrontend {
public:
    RtlFrontendOf(const Config& cfg, const std::string& waves = "")
        : channels_(cfg.count("sdma.channels")),
          period_(static_cast<Tick>(1e12 / cfg.frequency("chip.clock") + 0.5)),
          gm_size_(cfg.bytes("gm.size")),
          max_request_bytes_(cfg.bytes("sdma.max_request_bytes")),
          max_depth_(cfg.count("sdma.queue_depth")),
          tail_offset_(cfg.bytes("sdma.doorbell_tail_offset")),
          seen_(channels_, 0),
          published_(channels_, 0),
          depth_(channels_, 0),
          hold_(channels_, 0),
          mailbox_(channels_),
          taken_(channels_) {
        if (tail_offset_ >= 0x100) {
            throw ConfigError("sdma.frontend = rtl: sdma.doorbell_tail_offset must be below 0x100 (the RTL's registers)");
        }
        for (auto& e : taken_) e = std::make_unique<sc_core::sc_event>();
        build(waves);
        const uint64_t built = rtl_->pins().geometry_channels;
        if (built != channels_) {
            throw ConfigError("sdma.frontend = rtl: the RTL front-end is built for " + std::to_string(built) +
                              " channels; sdma.channels = " + std::to_string(channels_) +
                              " (rebuild the RTL with -GCHANNELS=N in rtl_stubs/sdma_frontend/BUILD)");
        }
    }

    void connect(SdmaBackend* engine) override { engine_ = engine; }
    bool clocked() const override { return true; }

    bool read(unsigned c, uint64_t reg, unsigned, uint64_t* value) override { return register_read(c, reg, value); }
    Write write(unsigned c, uint64_t reg, unsigned bytes, uint64_t value, Tick when, Tick* done) override {
        *done = when;
        if (reg == tail_offset_ && bytes == 4) {
            doorbell(c, value, when, done);
            return Write::Doorbell;
        }
        if (reg == SdmaRegister::kRingBase && bytes == 8) {
            seen_[c] = published_[c] = 0;  // a new queue is cold
            register_write(c, reg, value);
            return Write::NewQueue;
        }
        if (reg == SdmaRegister::kRingDepth && bytes == 4) {
            register_write(c, reg, value);
            depth_[c] = static_cast<uint32_t>(value);
            return Write::Register;
        }
        return Write::Refused;
    }
    SdmaRing ring(unsigned c) override {
        // Read as the pins show in the waves: the ring's position last, as the
        // sampler's queue depth has always read it.
        SdmaRing r;
        uint64_t v = 0;
        register_read(c, SdmaRegister::kRingBase, &r.ring_base);
        register_read(c, SdmaRegister::kError, &v);
        r.error = static_cast<SdmaError>(v);
        register_read(c, SdmaRegister::kCompleted, &r.completed);
        register_read(c, SdmaRegister::kHead, &v);
        r.head = static_cast<uint32_t>(v);
        register_read(c, tail_offset_, &v);
        r.tail = static_cast<uint32_t>(v);
        register_read(c, SdmaRegister::kRingDepth, &v);
        r.depth = static_cast<uint32_t>(v);
        r.busy = (rtl_->pins().chan_busy >> c) & 1;
        return r;
    }
    void inject(const SdmaFaults& faults) override {
        if (faults.error_at_request || faults.stall || faults.lose_doorbell) {
            throw std::invalid_argument("SDMA faults are injected into the TLM front-end: set sdma.frontend = tlm");
        }
    }
    const std::vector<SdmaFaultEvent>& fault_events() const override { return no_faults_; }

    FrontendRequest take(unsigned c) override {
        const Tick asked = sc_core::sc_time_stamp().value();
        want_ |= uint64_t{1} << c;
        wake_.notify(sc_core::SC_ZERO_TIME);
        while (!mailbox_[c]) sc_core::wait(*taken_[c]);
        FrontendRequest r = *mailbox_[c];
        mailbox_[c].reset();
        // Taken up as the TLM front-end takes it: once asked for, its doorbell
        // seen and its channel's queue published; decoded now.
        r.fetched = sc_core::sc_time_stamp().value();
        r.taken = std::max({asked, seen_[c], published_[c]});
        return r;
    }
    void retire(unsigned c) override {
        retiring_.push_back(c);
        wake_.notify(sc_core::SC_ZERO_TIME);
    }

    void run() override {  // the clock process
        Model& p = rtl_->pins();
        for (;;) {
            const Tick now = sc_core::sc_time_stamp().value();
            // Inputs of this cycle.
            const bool answer = !answers_.empty() && answers_.begin()->first <= now;
            if (answer) {
                const Answer& a = answers_.begin()->second;
                p.mem_resp_valid = 1;
                p.mem_resp_id = a.channel;
                p.mem_resp_error = a.error;
                for (unsigned w = 0; w < 16; ++w) {
                    p.mem_resp_data[w] = uint32_t{a.data[4 * w]} | uint32_t{a.data[4 * w + 1]} << 8 |
                                         uint32_t{a.data[4 * w + 2]} << 16 | uint32_t{a.data[4 * w + 3]} << 24;
                }
                answers_.erase(answers_.begin());
            }
            const uint64_t ready = want_ & p.req_pending;  // waiting channels with a request
            const int taking = ready ? __builtin_ctzll(ready) : -1;
            if (taking >= 0) {
                p.take_valid = 1;
                p.take_channel = static_cast<uint32_t>(taking);
            }
            if (!retiring_.empty()) {
                p.retire_valid = 1;
                p.retire_channel = retiring_.front();
                retiring_.erase(retiring_.begin());
            }
            if (p.mem_req_valid) {
                p.mem_req_ready = 1;
                Answer a;
                a.channel = p.mem_req_id;
                const std::optional<Tick> done = engine_->fetch_request(p.mem_req_addr, a.data, now);
                a.error = !done;
                answers_.emplace(done ? *done : now, a);
            }
            rtl_->settle();
            FrontendRequest taken;
            if (taking >= 0) {
                taken.error = static_cast<SdmaError>(p.take_error);
                taken.request.opcode = p.take_opcode;
                taken.request.length = p.take_length;
                taken.request.src = p.take_src;
                taken.request.dst = p.take_dst;
            }
            step(now);
            p.mem_resp_valid = 0;
            p.take_valid = 0;
            p.retire_valid = 0;
            p.mem_req_ready = 0;
            if (taking >= 0) {
                want_ &= ~(uint64_t{1} << taking);
                mailbox_[taking] = taken;
                taken_[taking]->notify(sc_core::SC_ZERO_TIME);
            }
            // The next cycle, or sleep until something can happen.
            const bool work = !p.idle || !retiring_.empty() || (want_ & p.req_pending) ||
                              (!answers_.empty() && answers_.begin()->first <= now + period_);
            if (work) {
                sc_core::wait(to_sc(period_));
                continue;
            }
            std::optional<Tick> next;
            for (unsigned c = 0; c < channels_; ++c) {
                if (hold_[c] > now && (!next || hold_[c] < *next)) next = hold_[c];
            }
            if (!answers_.empty() && (!next || answers_.begin()->first < *next)) next = answers_.begin()->first;
            if (next) wake_.notify(to_sc(*next - now));
            sc_core::wait(wake_);
        }
    }

private:
    static constexpr unsigned kResetCycles = 2;
    static constexpr uint64_t kRegisterSpan = 0x1000;  // reg_addr is 12 bits wide
    struct Answer {
        unsigned channel = 0;
        bool error = false;
        uint8_t data[kSdmaRequestBytes] = {};
    };

    bool register_read(unsigned c, uint64_t reg, uint64_t* value) {
        if (reg >= kRegisterSpan) return false;
        Model& p = rtl_->pins();
        p.reg_channel = c;
        p.reg_addr = static_cast<uint32_t>(reg);
        p.reg_write = 0;
        rtl_->settle();
        *value = p.reg_rdata;
        return !p.reg_unknown;
    }
    bool register_write(unsigned c, uint64_t reg, uint64_t value) {
        if (reg >= kRegisterSpan) return false;
        Model& p = rtl_->pins();
        p.reg_channel = c;
        p.reg_addr = static_cast<uint32_t>(reg);
        p.reg_write = 1;
        p.reg_wdata = value;
        rtl_->settle();
        const bool known = !p.reg_unknown;
        if (known) {
            p.reg_valid = 1;
            step(sc_core::sc_time_stamp().value());
            p.reg_valid = 0;
            wake_.notify(sc_core::SC_ZERO_TIME);
        }
        p.reg_write = 0;
        return known;
    }
    // A doorbell the RTL checks: a channel it stops (or a stopped one) is not
    // published; else the engine publishes it, and the channel fetches nothing
    // before the engine sees it.
    void doorbell(unsigned c, uint64_t tail, Tick when, Tick* done) {
        uint64_t error = 0, old_tail = 0;
        register_read(c, SdmaRegister::kError, &error);
        register_read(c, tail_offset_, &old_tail);
        register_write(c, tail_offset_, tail);
        if (error != 0) return;  // a stopped channel ignores its doorbell
        register_read(c, SdmaRegister::kError, &error);
        if (error != 0) {
            engine_->stopped(c, when);
            return;
        }
        // The depth as written (not read back: a register read shows in the waves).
        const uint64_t depth = depth_[c];
        const uint32_t posted = depth ? static_cast<uint32_t>((tail + depth - old_tail) % depth) : 0;
        const SdmaBackend::Publication p = engine_->publish(c, when, posted);
        seen_[c] = p.seen;
        published_[c] = p.published;
        hold_until(c, std::max(p.seen, p.published));
        *done = p.write_done;
    }
    // Channel c fetches nothing before `t`.
    void hold_until(unsigned c, Tick t) {
        hold_[c] = std::max(hold_[c], t);
        const Tick now = sc_core::sc_time_stamp().value();
        wake_.notify(to_sc(t > now ? t - now : 0));
    }

    void build(const std::string& waves) {
        rtl_ = std::make_unique<ClockedModel<Model, Tracer>>("sdma_frontend", period_, waves);
        Model& p = rtl_->pins();
        p.cfg_gm_size = gm_size_;
        p.cfg_max_request_bytes = max_request_bytes_;
        p.cfg_max_depth = static_cast<uint32_t>(max_depth_);
        p.cfg_tail_offset = static_cast<uint32_t>(tail_offset_);
        rtl_->reset(kResetCycles);
    }
    // One clock edge at `now`; reports channels that went idle.
    void step(Tick now) {
        uint64_t enable = 0;  // channels not held back at `now`
        for (unsigned c = 0; c < channels_; ++c) enable |= uint64_t{hold_[c] <= now} << c;
        rtl_->pins().chan_enable = enable;
        rtl_->advance_to(now);
        rtl_->cycle();
        const uint64_t busy = rtl_->pins().chan_busy;
        const uint64_t fell = busy_ & ~busy;
        busy_ = busy;
        for (unsigned c = 0; c < channels_; ++c) {
            if ((fell >> c) & 1) engine_->idle(c);
        }
    }

    uint64_t channels_;
    Tick period_;
    uint64_t gm_size_, max_request_bytes_, max_depth_, tail_offset_;
    std::unique_ptr<ClockedModel<Model, Tracer>> rtl_;
    SdmaBackend* engine_ = nullptr;
    std::vector<Tick> seen_, published_;  // per channel: its latest doorbell's publication
    std::vector<uint32_t> depth_;          // per channel: its ring depth as written
    const std::vector<SdmaFaultEvent> no_faults_;
    uint64_t busy_ = 0;
    std::vector<Tick> hold_;
    uint64_t want_ = 0;  // channels whose process waits in take()
    std::vector<std::optional<FrontendRequest>> mailbox_;
    std::vector<std::unique_ptr<sc_core::sc_event>> taken_;
    std::vector<unsigned> retiring_;
    std::multimap<Tick, Answer> answers_;  // memory answers by the time they are due
    sc_core::sc_event wake_;
};

}  // namespace pfsim

// Setting up a TLM-2.0 generic payload for a plain read or write, and sending
// it at an absolute time.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>

#include <tlm>

#include "model/common/time.h"

namespace pfsim {

// Readies `p` for a read or write of `len` bytes at `addr` to or from `data`
// (null: timing only), with no byte enables and an incomplete response.
// `len` must fit the payload's 32-bit length (a longer access is the caller's to split).
inline void prepare_payload(tlm::tlm_generic_payload& p, bool write, uint64_t addr, void* data, uint64_t len) {
    if (len > 0xffffffffu) throw std::logic_error("pfsim: a TLM payload of " + std::to_string(len) + " bytes (at most 2^32 - 1)");
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(static_cast<unsigned>(len));
    p.set_streaming_width(static_cast<unsigned>(len));
    p.set_byte_enable_ptr(nullptr);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

// Marks a transport issued before the current SystemC time, which a delay
// cannot say. A core's engines run concurrently but one process calls them in
// program order, so a later call can start earlier than one the process was
// held to. A target that reads `issue` (issue_time) answers in `done`
// (set_done), which may be in the past too.
struct IssuedEarlierExtension : tlm::tlm_extension<IssuedEarlierExtension> {
    Tick issue = 0;
    Tick done = 0;
    bool answered = false;
    tlm::tlm_extension_base* clone() const override { return new IssuedEarlierExtension(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        *this = static_cast<const IssuedEarlierExtension&>(other);
    }
};

// For targets: when `p` was issued, its extension's time or now + `delay`.
inline Tick issue_time(tlm::tlm_generic_payload& p, const sc_core::sc_time& delay) {
    IssuedEarlierExtension* earlier = nullptr;
    p.get_extension(earlier);
    return earlier ? earlier->issue : now_plus(delay);
}

// For targets: answers `p` with its completion time `done`.
inline void set_done(tlm::tlm_generic_payload& p, sc_core::sc_time& delay, Tick done) {
    IssuedEarlierExtension* earlier = nullptr;
    p.get_extension(earlier);
    const Tick now = sc_core::sc_time_stamp().value();
    if (earlier) {
        earlier->done = done;
        earlier->answered = true;
    }
    delay = to_sc(done > now ? done - now : 0);
}

// For initiators: sends `p` through `socket` as issued at `issue`, which may be
// before SystemC time; returns its completion time. A target that does not
// read the extension serves an earlier issue at SystemC time.
template <typename Socket>
Tick transport_at(Socket& socket, tlm::tlm_generic_payload& p, Tick issue) {
    const Tick now = sc_core::sc_time_stamp().value();
    sc_core::sc_time delay = to_sc(issue > now ? issue - now : 0);
    if (issue >= now) {
        socket->b_transport(p, delay);
        return sc_core::sc_time_stamp().value() + delay.value();  // a target may have waited
    }
    IssuedEarlierExtension earlier;
    earlier.issue = issue;
    p.set_extension(&earlier);
    struct Clear {
        tlm::tlm_generic_payload& p;
        ~Clear() { p.clear_extension<IssuedEarlierExtension>(); }
    } clear{p};
    socket->b_transport(p, delay);
    return earlier.answered ? earlier.done : sc_core::sc_time_stamp().value() + delay.value();
}

}  // namespace pfsim

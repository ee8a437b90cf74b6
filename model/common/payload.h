// Setting up a TLM-2.0 generic payload for a plain read or write.
#pragma once

#include <cstdint>

#include <tlm>

namespace pfsim {

// Readies `p` for a read or write of `len` bytes at `addr` to or from `data`
// (null: timing only), with no byte enables and an incomplete response.
inline void prepare_payload(tlm::tlm_generic_payload& p, bool write, uint64_t addr, void* data, uint64_t len) {
    p.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    p.set_address(addr);
    p.set_data_ptr(static_cast<unsigned char*>(data));
    p.set_data_length(static_cast<unsigned>(len));
    p.set_streaming_width(static_cast<unsigned>(len));
    p.set_byte_enable_ptr(nullptr);
    p.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
}

}  // namespace pfsim

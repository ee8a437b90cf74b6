#include "hw/sdma_request.h"

#include <cstring>

namespace pfsim {

namespace {
void put(uint8_t* out, uint64_t value, int bytes) {
    for (int i = 0; i < bytes; ++i) out[i] = static_cast<uint8_t>(value >> (8 * i));
}
uint64_t get(const uint8_t* in, int bytes) {
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= uint64_t{in[i]} << (8 * i);
    return v;
}
}  // namespace

SdmaRequest SdmaRequest::cache_prefetch(uint64_t src, uint32_t length) {
    SdmaRequest r;
    r.opcode = kSdmaOpCachePrefetch;
    r.src = src;
    r.length = length;
    return r;
}

SdmaRequest SdmaRequest::copy(uint64_t src, uint64_t dst, uint32_t length) {
    SdmaRequest r;
    r.opcode = kSdmaOpCopy;
    r.src = src;
    r.dst = dst;
    r.length = length;
    return r;
}

void SdmaRequest::encode(uint8_t out[kSdmaRequestBytes]) const {
    std::memset(out, 0, kSdmaRequestBytes);
    out[0] = type & 0x3F;
    put(out + 4, stream_id, 2);
    put(out + 6, task_id, 2);
    out[14] = kernel_credit;
    const uint32_t word = uint32_t{opcode} | uint32_t{sssv} << 9 | uint32_t{dssv} << 10 |
                          uint32_t{sns} << 11 | uint32_t{dns} << 12 | uint32_t(qos & 0xF) << 13 |
                          uint32_t{partid} << 19;
    put(out + 16, word, 4);
    put(out + 28, length, 4);
    put(out + 32, src, 8);
    put(out + 40, dst, 8);
}

SdmaRequest SdmaRequest::decode(const uint8_t in[kSdmaRequestBytes]) {
    SdmaRequest r;
    r.type = in[0] & 0x3F;
    r.stream_id = static_cast<uint16_t>(get(in + 4, 2));
    r.task_id = static_cast<uint16_t>(get(in + 6, 2));
    r.kernel_credit = in[14];
    const auto word = static_cast<uint32_t>(get(in + 16, 4));
    r.opcode = word & 0xFF;
    r.sssv = (word >> 9) & 1;
    r.dssv = (word >> 10) & 1;
    r.sns = (word >> 11) & 1;
    r.dns = (word >> 12) & 1;
    r.qos = (word >> 13) & 0xF;
    r.partid = (word >> 19) & 0xFF;
    r.length = static_cast<uint32_t>(get(in + 28, 4));
    r.src = get(in + 32, 8);
    r.dst = get(in + 40, 8);
    return r;
}

bool SdmaRequest::operator==(const SdmaRequest& o) const {
    return type == o.type && stream_id == o.stream_id && task_id == o.task_id &&
           kernel_credit == o.kernel_credit && opcode == o.opcode && sssv == o.sssv &&
           dssv == o.dssv && sns == o.sns && dns == o.dns && qos == o.qos && partid == o.partid &&
           length == o.length && src == o.src && dst == o.dst;
}

const char* sdma_error_name(SdmaError e) {
    switch (e) {
        case SdmaError::None: return "none";
        case SdmaError::BadType: return "bad_type";
        case SdmaError::BadOpcode: return "bad_opcode";
        case SdmaError::ZeroLength: return "zero_length";
        case SdmaError::Oversized: return "oversized_length";
        case SdmaError::SourceOutsideGm: return "source_outside_gm";
        case SdmaError::DestinationOutsideGm: return "destination_outside_gm";
        case SdmaError::TailOutOfRange: return "tail_out_of_range";
        case SdmaError::NotConfigured: return "not_configured";
        case SdmaError::RingOutsideGm: return "ring_outside_gm";
        case SdmaError::InjectedFault: return "injected_fault";
    }
    return "unknown";
}

}  // namespace pfsim

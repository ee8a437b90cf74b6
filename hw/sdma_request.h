// One 64-byte SDMA request (a2a3 STARS SDMA entry), prefetch-protocol.md §2.4b.
// A hardware interface: the runtime writes these, the model reads them.
// Packed little-endian; bit fields fill from the least significant bit.
#pragma once

#include <cstdint>
#include <string>

namespace pfsim {

constexpr uint64_t kSdmaRequestBytes = 64;
constexpr uint8_t kSdmaType = 11;
constexpr uint8_t kSdmaOpCopy = 0;
constexpr uint8_t kSdmaOpCachePrefetch = 6;
constexpr uint8_t kA2a3KernelCredit = 240;

struct SdmaRequest {
    uint8_t type = kSdmaType;        // byte 0, bits 0-5
    uint16_t stream_id = 0;          // bytes 4-5
    uint16_t task_id = 0;            // bytes 6-7
    uint8_t kernel_credit = kA2a3KernelCredit;  // byte 14
    uint8_t opcode = kSdmaOpCopy;    // bytes 16-19: opcode:8 ie2 sssv dssv sns dns qos:4 sro dro partid:8
    bool sssv = true, dssv = true, sns = true, dns = true;
    uint8_t qos = 6;
    uint8_t partid = 63;
    uint32_t length = 0;             // bytes 28-31
    uint64_t src = 0;                // bytes 32-39
    uint64_t dst = 0;                // bytes 40-47

    static SdmaRequest cache_prefetch(uint64_t src, uint32_t length);
    static SdmaRequest copy(uint64_t src, uint64_t dst, uint32_t length);

    void encode(uint8_t out[kSdmaRequestBytes]) const;
    static SdmaRequest decode(const uint8_t in[kSdmaRequestBytes]);
    bool operator==(const SdmaRequest& o) const;
};

// Why a channel stopped. Readable in the channel's error register and the summary.
enum class SdmaError : uint32_t {
    None = 0,
    BadType = 1,          // type field is not 11 (SDMA)
    BadOpcode = 2,        // opcode is neither 0 (copy) nor 6 (cache prefetch)
    ZeroLength = 3,
    Oversized = 4,        // length > sdma.max_request_bytes
    SourceOutsideGm = 5,
    DestinationOutsideGm = 6,
    TailOutOfRange = 7,   // doorbell value >= queue depth
    NotConfigured = 8,    // doorbell rung before the ring base and depth were set
    RingOutsideGm = 9,    // the request could not be fetched
    InjectedFault = 10,   // pfsim --inject sdma-error: the channel failed as a faulty engine would
};

const char* sdma_error_name(SdmaError e);

}  // namespace pfsim

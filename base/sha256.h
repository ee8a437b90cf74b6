// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex.
#pragma once

#include <cstdint>
#include <string>

namespace pfsim {

// By the host's SHA instructions where it has them (x86 SHA-NI: several times
// faster), else portable code; the same digest either way.
std::string sha256_hex(const uint8_t* data, uint64_t bytes);
// The portable code alone (tests compare the two).
std::string sha256_hex_portable(const uint8_t* data, uint64_t bytes);

}  // namespace pfsim

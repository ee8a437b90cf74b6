// SHA-256 (FIPS 180-4) of a byte string, as lowercase hex.
#pragma once

#include <cstdint>
#include <string>

namespace pfsim {

std::string sha256_hex(const uint8_t* data, uint64_t bytes);

}  // namespace pfsim

// An address or a value as "0x" followed by lowercase hex digits, for messages.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace pfsim {

// Writes the low 4 * `digits` bits of `v` as `digits` lowercase hex digits into
// out[0, digits), the most significant first (no prefix, no terminator).
inline void put_hex_digits(uint64_t v, int digits, char* out) {
    for (int d = 0; d < digits; ++d) out[d] = "0123456789abcdef"[(v >> (4 * (digits - 1 - d))) & 15];
}

inline std::string hex(uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
}

}  // namespace pfsim

// An address or a value as "0x" followed by lowercase hex digits, for messages.
#pragma once

#include <cstdint>
#include <sstream>
#include <string>

namespace pfsim {

inline std::string hex(uint64_t v) {
    std::ostringstream os;
    os << "0x" << std::hex << v;
    return os.str();
}

}  // namespace pfsim

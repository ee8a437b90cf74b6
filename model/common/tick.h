// Simulated time: a count of picoseconds (SystemC's default resolution), the
// one unit every block, the configuration and the traces give time in.
#pragma once

#include <cstdint>

namespace pfsim {

using Tick = uint64_t;

}  // namespace pfsim

// Conversions between pfsim's picosecond Ticks and SystemC time.
#pragma once

#include <cmath>
#include <systemc>

#include "model/common/tick.h"

namespace pfsim {

inline sc_core::sc_time to_sc(Tick t) { return sc_core::sc_time::from_value(t); }
inline Tick to_tick(const sc_core::sc_time& t) { return t.value(); }
// Absolute time of an access issued `offset` after the current SystemC time.
inline Tick now_plus(const sc_core::sc_time& offset) {
    return sc_core::sc_time_stamp().value() + offset.value();
}
// Time to move `bytes` at `bytes_per_second`.
inline Tick transfer_time(uint64_t bytes, double bytes_per_second) {
    return static_cast<Tick>(static_cast<double>(bytes) * 1e12 / bytes_per_second + 0.5);
}

}  // namespace pfsim

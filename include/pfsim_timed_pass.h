// pfsim's timed pass, for calibration instruments (no board has it): a kernel
// brackets the part of its work it wants timed. The run reports the span from
// the earliest start to the latest end over the cores that ended one, the
// bytes they say they moved, the bandwidth, and the mean length of one marked
// pass (the summary's `timed_pass`, which `pfsim calibrate` reads). Marking costs no simulated time.
#pragma once

#include <cstdint>

#include <pto/pto-inst.hpp>

inline void pfsim_timed_pass_begin() { pfsim::current_core().timed_pass_begin(); }
inline void pfsim_timed_pass_end(uint64_t bytes_moved) { pfsim::current_core().timed_pass_end(bytes_moved); }

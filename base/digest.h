// A fast 256-bit digest of a byte string, as 64 lowercase hex digits, for
// telling whether two runs left the same bytes (a run's outputs, prefetch off
// against on). Not cryptographic: anyone can make two strings that share one;
// a difference that nobody chose goes unseen with a chance of about 2^-64.
// Several times faster than SHA-256 by SHA-NI (memory-bound on most hosts).
#pragma once

#include <cstdint>
#include <string>

namespace pfsim {

std::string digest_hex(const uint8_t* data, uint64_t bytes);

}  // namespace pfsim

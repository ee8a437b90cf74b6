// Parsing of quantities with units ("192 MiB", "1.6 TB/s", "307 cycles").
#pragma once

#include <cstdint>
#include <string>

namespace pfsim {

enum class Kind { Count, Size, Bandwidth, Time, Frequency, Choice, Flag };

const char* kind_name(Kind kind);
// The canonical unit a kind is printed in ("B", "B/s", "ps", "Hz"; "" for plain values).
const char* canonical_unit(Kind kind);

// A parsed number. Time and bandwidth may be given per clock cycle
// ("307 cycles", "32 B/cycle"); those resolve against chip.clock later.
struct Quantity {
    double value = 0;       // in the kind's canonical unit, or per cycle
    bool per_cycle = false;
};

// Parses `text` as a quantity of `kind`. Returns an empty string on success,
// otherwise a message saying what is wrong with the text.
std::string parse_quantity(Kind kind, const std::string& text, Quantity* out);

// Parses a plain unsigned integer, decimal or 0x-hex, with optional size
// suffix when `allow_size_units` ("4KiB"). Returns "" on success.
std::string parse_unsigned(const std::string& text, bool allow_size_units, uint64_t* out);

}  // namespace pfsim

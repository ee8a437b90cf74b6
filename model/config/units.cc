#include "model/config/units.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <utility>
#include <vector>

namespace pfsim {
namespace {

struct Unit {
    const char* name;
    double scale;  // to the canonical unit
    bool per_cycle;
};

const std::vector<Unit>& units_for(Kind kind) {
    static const std::vector<Unit> size = {
        {"B", 1, false},          {"KB", 1e3, false},       {"MB", 1e6, false},
        {"GB", 1e9, false},       {"TB", 1e12, false},      {"KiB", 1024.0, false},
        {"MiB", 1048576.0, false}, {"GiB", 1073741824.0, false}, {"TiB", 1099511627776.0, false},
    };
    static const std::vector<Unit> bandwidth = {
        {"B/s", 1, false},         {"KB/s", 1e3, false},  {"MB/s", 1e6, false},
        {"GB/s", 1e9, false},      {"TB/s", 1e12, false}, {"KiB/s", 1024.0, false},
        {"MiB/s", 1048576.0, false}, {"GiB/s", 1073741824.0, false},
        {"B/cycle", 1, true},
    };
    static const std::vector<Unit> time = {
        {"ps", 1, false},  {"ns", 1e3, false}, {"us", 1e6, false},
        {"ms", 1e9, false}, {"s", 1e12, false}, {"cycles", 1, true}, {"cycle", 1, true},
    };
    static const std::vector<Unit> frequency = {
        {"Hz", 1, false}, {"kHz", 1e3, false}, {"MHz", 1e6, false}, {"GHz", 1e9, false},
    };
    static const std::vector<Unit> none;
    switch (kind) {
        case Kind::Size: return size;
        case Kind::Bandwidth: return bandwidth;
        case Kind::Time: return time;
        case Kind::Frequency: return frequency;
        default: return none;
    }
}

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

std::string unit_list(Kind kind) {
    std::string out;
    for (const Unit& u : units_for(kind)) {
        if (!out.empty()) out += ", ";
        out += u.name;
    }
    return out;
}

// Splits "1.6 TB/s" into a number and a unit string.
bool split_number(const std::string& text, double* number, std::string* unit) {
    std::string t = trim(text);
    if (t.empty()) return false;
    const char* begin = t.c_str();
    char* end = nullptr;
    if (t.size() > 1 && t[0] == '0' && (t[1] == 'x' || t[1] == 'X')) {
        *number = static_cast<double>(std::strtoull(begin, &end, 16));
    } else {
        *number = std::strtod(begin, &end);
    }
    if (end == begin) return false;
    *unit = trim(std::string(end));
    return std::isfinite(*number);
}

}  // namespace

const char* kind_name(Kind kind) {
    switch (kind) {
        case Kind::Count: return "count";
        case Kind::Size: return "size";
        case Kind::Bandwidth: return "bandwidth";
        case Kind::Time: return "time";
        case Kind::Frequency: return "frequency";
        case Kind::Choice: return "choice";
        case Kind::Flag: return "flag";
    }
    return "?";
}

const char* canonical_unit(Kind kind) {
    switch (kind) {
        case Kind::Size: return "B";
        case Kind::Bandwidth: return "B/s";
        case Kind::Time: return "ps";
        case Kind::Frequency: return "Hz";
        default: return "";
    }
}

std::string parse_quantity(Kind kind, const std::string& text, Quantity* out) {
    double number = 0;
    std::string unit;
    if (!split_number(text, &number, &unit)) {
        return "'" + text + "' is not a number";
    }
    if (number < 0) return "'" + text + "' is negative";
    if (kind == Kind::Count) {
        if (!unit.empty()) return "'" + text + "' must be a plain number (no unit)";
        if (number != std::floor(number)) return "'" + text + "' must be a whole number";
        if (number >= 0x1p64) return "'" + text + "' is too large (at most 2^64 - 1)";
        *out = {number, false};
        return "";
    }
    if (unit.empty()) {
        if (kind == Kind::Size) {
            *out = {number, false};
        } else {
            return "'" + text + "' needs a unit (one of " + unit_list(kind) + ")";
        }
    } else {
        bool found = false;
        for (const Unit& u : units_for(kind)) {
            if (unit == u.name) {
                *out = {number * u.scale, u.per_cycle};
                found = true;
                break;
            }
        }
        if (!found) {
            return "unknown unit '" + unit + "' in '" + text + "' (expected one of " +
                   unit_list(kind) + ")";
        }
    }
    if (kind == Kind::Size && out->value != std::floor(out->value)) {
        return "'" + text + "' is not a whole number of bytes";
    }
    // Sizes and times are held as 64-bit integers (bytes, ps).
    if (kind == Kind::Size && out->value >= 0x1p64) return "'" + text + "' is too large (at most 2^64 - 1 bytes)";
    if (kind == Kind::Time && !out->per_cycle && out->value >= 0x1p63) return "'" + text + "' is too long (at most 2^63 ps)";
    return "";
}

std::string parse_unsigned(const std::string& text, bool allow_size_units, uint64_t* out) {
    Quantity q;
    std::string err = parse_quantity(allow_size_units ? Kind::Size : Kind::Count, text, &q);
    if (!err.empty()) return err;
    if (q.value > 1.8e19) return "'" + text + "' is too large";
    *out = static_cast<uint64_t>(q.value);
    return "";
}

}  // namespace pfsim

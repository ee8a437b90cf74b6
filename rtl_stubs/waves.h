// Which waves file a path names. Free of Verilator's headers: the command line
// and the platform check a --waves path without pulling the RTL in.
#pragma once

#include <stdexcept>
#include <string>

namespace pfsim {

enum class WavesFormat { None, Vcd, Fst };

// "" -> None, *.vcd -> Vcd, *.fst -> Fst; anything else is refused.
inline WavesFormat waves_format(const std::string& path) {
    auto ends_with = [&](const char* ext) {
        const std::string e(ext);
        return path.size() > e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
    };
    if (path.empty()) return WavesFormat::None;
    if (ends_with(".vcd")) return WavesFormat::Vcd;
    if (ends_with(".fst")) return WavesFormat::Fst;
    throw std::invalid_argument("waves file '" + path + "' must end in .vcd or .fst");
}

}  // namespace pfsim

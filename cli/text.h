// Small text helpers shared by the commands.
#pragma once

#include <string>

namespace pfsim {

// Escapes &, <, > and " for XML and HTML.
inline std::string markup_escape(const std::string& s) {
    std::string out;
    for (char c : s) {
        switch (c) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += c;
        }
    }
    return out;
}

}  // namespace pfsim

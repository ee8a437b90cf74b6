#include "base/toml_text.h"

#include <algorithm>
#include <cstddef>

namespace pfsim {

namespace {

bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

}  // namespace

std::string toml_text_problem(const std::string& s) {
    size_t line = 1;
    auto problem = [&](const char* what) { return std::to_string(line) + ": " + what; };
    const size_t n = s.size();
    for (size_t i = 0; i + 2 < n; ++i) {  // U+F000..U+FFFF, wherever they stand
        if (static_cast<unsigned char>(s[i]) != 0xEF) continue;
        const unsigned cp = 0xF000u | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
                            (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
        if (cp >= 0xFB26u && cp <= 0xFEFEu) {
            line = 1 + static_cast<size_t>(std::count(s.begin(), s.begin() + static_cast<long>(i), '\n'));
            return problem("a character in U+FB26..U+FEFE (toml++ 3.3.0 cannot read them safely anywhere)");
        }
    }
    for (size_t i = 0; i < n; ++i) {
        const char c = s[i];
        if (c == '\n') {
            ++line;
        } else if (c == '#') {  // a comment, to the end of the line
            while (i + 1 < n && s[i + 1] != '\n') ++i;
        } else if (c == '"' || c == '\'') {
            const bool multi = s.compare(i, 3, std::string(3, c)) == 0;
            const bool basic = c == '"';
            i += multi ? 3 : 1;
            for (; i < n; ++i) {
                if (s[i] == '\n') {
                    ++line;
                    if (!multi) break;  // an unterminated string: toml++ reports it
                } else if (basic && s[i] == '\\') {
                    size_t j = i + 1;
                    while (j < n && (s[j] == ' ' || s[j] == '\t')) ++j;
                    if (multi && j < n && non_ascii(s[j])) {
                        return problem("a non-ASCII character after a backslash in a multi-line string");
                    }
                    if (multi && j < n && (s[j] == '\n' || s[j] == '\r')) {  // a line-ending backslash
                        while (j < n && (s[j] == ' ' || s[j] == '\t' || s[j] == '\n' || s[j] == '\r')) {
                            if (s[j] == '\n') ++line;
                            ++j;
                        }
                        if (j < n && non_ascii(s[j])) {
                            return problem("a non-ASCII character right after a line-ending backslash");
                        }
                        i = j - 1;
                    } else {
                        ++i;  // the escaped character
                    }
                } else if (s[i] == c && (!multi || s.compare(i, 3, std::string(3, c)) == 0)) {
                    if (multi) i += 2;
                    break;
                }
            }
        } else if (non_ascii(c)) {
            return problem("a non-ASCII character outside a string or comment (TOML allows them only there)");
        }
    }
    return "";
}

}  // namespace pfsim

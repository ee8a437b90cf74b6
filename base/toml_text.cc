#include "base/toml_text.h"

#include <cstddef>

namespace pfsim {

namespace {

bool non_ascii(char c) { return static_cast<unsigned char>(c) >= 0x80; }

bool space(char c) { return c == ' ' || c == '\t'; }

// toml++'s is_value_terminator, for ASCII.
bool value_terminator(char c) {
    return space(c) || (c >= '\n' && c <= '\r') || c == ',' || c == ']' || c == '}' || c == '#';
}

}  // namespace

std::string toml_text_problem(const std::string& s) {
    size_t line = 1;
    auto problem = [&](const char* what) { return std::to_string(line) + ": " + what; };
    const size_t n = s.size();
    // Where the lexer stands: in a key (line start, table header, after '{'
    // or ',' in an inline table) or not; and the open arrays ('a') and inline
    // tables ('t'). Valid TOML keeps this in step with toml++; on invalid
    // text toml++ stops at its first error, which is at or before the first
    // place this loses step.
    bool in_key = true, in_header = false;
    std::string open;
    for (size_t i = 0; i < n; ++i) {
        const char c = s[i];
        if (c == '\n') {
            ++line;
            if (open.empty()) in_key = true, in_header = false;
        } else if (space(c) || c == '\r') {
        } else if (c == '#') {  // a comment, to the end of the line
            while (i + 1 < n && s[i + 1] != '\n') ++i;
        } else if (c == '"' || c == '\'') {
            const bool multi = s.compare(i, 3, std::string(3, c)) == 0;
            const bool basic = c == '"';
            i += multi ? 3 : 1;
            for (; i < n; ++i) {
                if (s[i] == '\n') {
                    if (!multi) {  // an unterminated string: toml++ reports it
                        --i;
                        break;
                    }
                    ++line;
                } else if (basic && s[i] == '\\') {
                    size_t j = i + 1;
                    while (j < n && space(s[j])) ++j;
                    if (multi && j < n && non_ascii(s[j])) {
                        return problem("a non-ASCII character after a backslash in a multi-line string");
                    }
                    if (multi && j < n && (s[j] == '\n' || s[j] == '\r')) {  // a line-ending backslash
                        while (j < n && (space(s[j]) || s[j] == '\n' || s[j] == '\r')) {
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
        } else if (in_key) {
            if (c == '[' && open.empty()) in_header = true;
            if (c == ']' && in_header) in_key = in_header = false;
            if (c == '=') in_key = false;
        } else if (c == '[' || c == '{') {
            open.push_back(c == '[' ? 'a' : 't');
            in_key = c == '{';
        } else if (c == ']' || c == '}') {
            if (!open.empty()) open.pop_back();
        } else if (c == ',') {
            in_key = !open.empty() && open.back() == 't';
        } else {  // a bare value, read by toml++ up to a terminator
            size_t j = i + 1;
            for (; j < n && !value_terminator(s[j]); ++j) {
                if (non_ascii(s[j])) {
                    return problem("a non-ASCII character in a bare value (outside quotes TOML values are ASCII)");
                }
            }
            i = j - 1;
        }
    }
    return "";
}

}  // namespace pfsim

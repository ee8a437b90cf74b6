// A check of TOML text before it reaches toml++. Debian's toml++ 3.3.0 tests
// some characters for whitespace with undefined behaviour
// (__builtin_unreachable in is_non_ascii_horizontal_whitespace for U+00A1..
// U+0499, U+2C8E..U+3088 but U+3000, and U+FB26..U+FEFE; found by
// fuzz/case_fuzz and fuzz/config_fuzz). It makes that test on the character
// after each character it reads outside a string, on every character of a
// bare value (a number, date, boolean, inf or nan) up to the first ASCII
// value terminator, quotes included, and after a backslash in a multi-line
// basic string. TOML 1.0 allows characters beyond ASCII only in strings and
// comments, so refusing them at those places refuses no valid document.
// Readers of outside TOML call this first.
#pragma once

#include <string>

namespace pfsim {

// "" when the text may be parsed; otherwise "LINE: what", LINE counting from
// 1, for the first non-ASCII byte
//  - outside a string or comment (a key, a table header, between values);
//  - in a bare value: from a value's first character that is not a quote,
//    bracket or brace, up to the first space, tab, line break, ',', ']', '}'
//    or '#', across any quote in between (as toml++ scans a number);
//  - in a multi-line basic string right after a backslash (spaces and tabs
//    between) or after a line-ending backslash's line break.
std::string toml_text_problem(const std::string& text);

}  // namespace pfsim

// A check of TOML text before it reaches toml++. TOML 1.0 allows characters
// beyond ASCII only in strings and comments; Debian's toml++ 3.3.0 meets one
// anywhere else (where it tests for whitespace) with undefined behaviour
// (__builtin_unreachable in is_non_ascii_horizontal_whitespace, found by
// fuzz/case_fuzz). Readers of outside TOML call this first.
#pragma once

#include <string>

namespace pfsim {

// "" when the text may be parsed; otherwise "LINE: what", LINE counting from
// 1: the first character in U+FB26..U+FEFE anywhere (the range toml++'s
// whitespace test mishandles), else the first non-ASCII byte outside a string or comment, or in a multi-line
// basic string right after a backslash (spaces and tabs between) or after a
// line-ending backslash's line break: places where toml++ also tests for
// whitespace.
std::string toml_text_problem(const std::string& text);

}  // namespace pfsim

// The cases pfsim ships (cases/, simpler's layout): embedded in the
// binary, unpacked into the compile cache, and run through the same loader as
// a user's case files.
#pragma once

#include <string>
#include <vector>

namespace pfsim {

// The case files pfsim ships (cases/*/*.toml), unpacked into the
// compile cache, sorted.
std::vector<std::string> shipped_cases();
// The shipped case file whose case is named `name` (its `name` key, else its
// file name), or empty.
std::string shipped_case_named(const std::string& name);
// A shipped case file's path as it is in pfsim's sources
// ("cases/no_gain/case.toml"); other paths unchanged.
std::string shipped_case_label(const std::string& path);

}  // namespace pfsim

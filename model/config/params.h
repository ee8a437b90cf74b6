// The one parameter set: every key pfsim knows, its kind and what it means.
// Values live in the presets (model/config/presets/*.toml), never here.
#pragma once

#include <string>
#include <vector>

#include "model/config/units.h"

namespace pfsim {

struct ParamSpec {
    std::string key;          // "l2.size"
    Kind kind;
    std::string description;  // one line
    bool power_of_two = false;
    bool may_be_zero = false;              // numbers are > 0 unless this is set
    std::vector<std::string> choices;      // Kind::Choice only
};

// Every parameter, in the order `pfsim config` prints them.
const std::vector<ParamSpec>& param_specs();
// nullptr when `key` is not a parameter.
const ParamSpec* find_param(const std::string& key);

}  // namespace pfsim

// Presets compiled into the binary (generated from presets/*.toml).
#pragma once

#include <vector>

namespace pfsim {

struct EmbeddedPreset {
    const char* name;
    const char* text;
};

const std::vector<EmbeddedPreset>& embedded_presets();

}  // namespace pfsim

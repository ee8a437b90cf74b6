#!/bin/sh
# Usage: embed.sh OUT.cc PRESET.toml... — writes the presets as C++ string literals.
set -eu
out=$1; shift
{
    echo '#include "model/config/presets/presets.h"'
    echo 'namespace pfsim {'
    echo 'const std::vector<EmbeddedPreset>& embedded_presets() {'
    echo '    static const std::vector<EmbeddedPreset> presets = {'
    for f in "$@"; do
        name=$(basename "$f" .toml)
        printf '        {"%s", R"pfsim_preset(' "$name"
        cat "$f"
        echo ')pfsim_preset"},'
    done
    echo '    };'
    echo '    return presets;'
    echo '}'
    echo '}  // namespace pfsim'
} > "$out"

// The configuration readers: a TOML file over the default preset, then each of
// its lines as a --set assignment (units, sizes, choices), then validation.
// Bad input is a ConfigError; nothing else may escape.
#include <sstream>

#include "fuzz/fuzz_input.h"
#include "model/config/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    const std::string text = pfsim::fuzz::text(data, size);
    pfsim::Config cfg = pfsim::Config::from_preset();
    try {
        cfg.load_toml(text, "fuzz.toml");
        cfg.validate();
    } catch (const pfsim::ConfigError&) {
    }
    pfsim::Config sets = pfsim::Config::from_preset();
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        try {
            sets.set(line);
        } catch (const pfsim::ConfigError&) {
        }
    }
    try {
        sets.validate();
        (void)sets.to_json();
    } catch (const pfsim::ConfigError&) {
    }
    return 0;
}

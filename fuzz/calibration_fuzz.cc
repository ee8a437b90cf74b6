// The calibration table (`pfsim calibrate --table`, docs/calibration.md): its
// TOML and its expressions, evaluated against no runs. Bad input is a
// TableError naming the file and key, an expression a runtime_error naming
// what it lacks; nothing else may escape.
#include "calibration/table.h"

#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace pfsim::calibration;
    try {
        const std::vector<nlohmann::json> runs = {nlohmann::json::object()};
        const Inputs in{&runs, [](const std::string&) { return 1.0; }, [](const std::string&) { return 1.0; }};
        for (const Figure& f : read_table(std::string(reinterpret_cast<const char*>(data), size), "fuzz.toml")) {
            (void)f.low.evaluate(in);
            (void)f.high.evaluate(in);
            try {
                (void)f.value.evaluate(in);
            } catch (const std::runtime_error&) {
            }
        }
    } catch (const TableError&) {
    }
    return 0;
}

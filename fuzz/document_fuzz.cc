// What `pfsim diff` and `pfsim report` read: run summaries, check reports,
// Chrome traces, onboard CSV and trace-JSON profiles. The first byte picks the
// file's extension (the reader tells CSV from JSON by it); bad input is a
// UsageError naming the file and position; nothing else may escape.
#include "cli/documents.h"
#include "cli/options.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    const char* extension = data[0] % 2 ? ".csv" : ".json";
    try {
        (void)pfsim::read_document(pfsim::fuzz::input_file(data + 1, size - 1, extension));
    } catch (const pfsim::UsageError&) {
    }
    return 0;
}

// The schema name of pfsim's run summaries (docs/trace-format.md).
#pragma once

namespace pfsim {

constexpr const char* kSummarySchema = "pfsim.summary/1";

}  // namespace pfsim

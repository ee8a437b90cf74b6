// Pieces of the JSON summary shared by the commands that write one.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/core/core.h"
#include "model/config/config.h"
#include "model/soc/sampler.h"
#include "model/trace/recorder.h"

namespace pfsim {

constexpr const char* kSummarySchema = "pfsim.summary/1";

// Counters over time (at most 200 points): t_ns, gm_read_gbps, gm_write_gbps, sdma_gbps, l2_hit_rate.
nlohmann::json series_json(const Sampler& sampler);
// Where the time went, summed over `cores`: busy time per pipe, prefetch waits, L2 stalls.
nlohmann::json lanes_json(const std::vector<const Core*>& cores);

// The recorder for `--trace PATH` (null when `path` is empty); an unwritable
// path is bad input (api::BadInput).
std::unique_ptr<TraceRecorder> open_trace(const std::string& path, const Config& cfg);

}  // namespace pfsim

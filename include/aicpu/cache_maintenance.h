// pfsim's "aicpu/cache_maintenance.h": the orchestrator's cache maintenance of
// a GM range. pfsim keeps no AICPU data cache (the orchestrator reads GM as it
// is), so each call is the time it takes: orch.tensor_data_cost, during which
// the simulation runs on -- a loop polling GM between calls sees the kernels'
// writes, as on the board.
#pragma once

#include <cstddef>

#include "runtime/orchestration/orchestration_api.h"

inline void cache_invalidate_range(const void* addr, size_t size, PFSIM_CALL_SITE) {
    rt_cache_maintenance(addr, size, file, line);
}
inline void cache_flush_range(const void* addr, size_t size, PFSIM_CALL_SITE) {
    rt_cache_maintenance(addr, size, file, line);
}

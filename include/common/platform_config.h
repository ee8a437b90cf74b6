// pfsim's "common/platform_config.h": the a2a3 platform figures kernels and
// orchestrations read as constants. They are the figures of the a2a3 preset
// (die.aic_cores = 24 clusters of 1 AIC + 2 AIV); a configuration that changes
// the die does not change these constants -- read rt_available_cluster_count()
// in an orchestration for the die that runs. Profiling-buffer sizes of simpler's
// own tooling are not here: pfsim has no such buffers.
#pragma once

#include <cstdint>

constexpr int PLATFORM_MAX_BLOCKDIM = 24;  // clusters of the die
constexpr int PLATFORM_CORES_PER_BLOCKDIM = 3;
constexpr int PLATFORM_AIC_CORES_PER_BLOCKDIM = 1;
constexpr int PLATFORM_AIV_CORES_PER_BLOCKDIM = 2;
constexpr int PLATFORM_MAX_CORES = PLATFORM_MAX_BLOCKDIM * PLATFORM_CORES_PER_BLOCKDIM;
constexpr int PLATFORM_MAX_AIC_PER_THREAD = PLATFORM_MAX_BLOCKDIM * PLATFORM_AIC_CORES_PER_BLOCKDIM;
constexpr int PLATFORM_MAX_AIV_PER_THREAD = PLATFORM_MAX_BLOCKDIM * PLATFORM_AIV_CORES_PER_BLOCKDIM;
constexpr int PLATFORM_MAX_CORES_PER_THREAD = PLATFORM_MAX_AIC_PER_THREAD + PLATFORM_MAX_AIV_PER_THREAD;
// AICPU threads (1 orchestrator + 3 schedulers by default). pfsim schedules
// with one simulated scheduler whatever the count (docs/cases.md).
constexpr int PLATFORM_MAX_AICPU_THREADS = 4;
constexpr int PLATFORM_DEFAULT_AICPU_THREAD_NUM = 4;
// get_sys_cnt() counts at 50 MHz (one tick 20 ns of simulated time).
constexpr uint64_t PLATFORM_PROF_SYS_CNT_FREQ = 50000000;

inline double cycles_to_us(uint64_t cycles) {
    return static_cast<double>(cycles) * 1e6 / static_cast<double>(PLATFORM_PROF_SYS_CNT_FREQ);
}

// Samples the memory system's counters into a trace while something runs:
// GM read and write bandwidth, L2 hit rate, L2 lines held by prefetch, and the
// queue depth of every SDMA channel in use.
#pragma once

#include <chrono>
#include <functional>
#include <vector>

#include <systemc>

#include "model/soc/soc.h"
#include "model/trace/recorder.h"

namespace pfsim {

class Sampler : public sc_core::sc_module {
public:
    Sampler(sc_core::sc_module_name name, Soc& soc, Tick interval);

    void attach_trace(TraceRecorder* trace) {
        trace_ = trace;
        pid_ = 0;  // a new recorder names its processes again
    }
    // Samples every interval from now while `active()` holds, then once more.
    // A run that reaches kMaxSamples samples has each pair of them merged and
    // samples half as often from then on (memory and time stay bounded however
    // small the interval or long the run).
    static constexpr size_t kMaxSamples = 4096;
    void start(std::function<bool()> active);
    // While a run goes on, calls report(simulated ps since its start) about every
    // `every` of wall time (null: never). Wall time decides only when a report
    // is made, never what is simulated.
    void report_progress(std::function<void(Tick)> report, std::chrono::milliseconds every) {
        progress_ = std::move(report);
        progress_every_ = every;
    }

    // The samples of the last run, at most `points` of them (neighbours averaged);
    // times from the start of the run.
    struct Series {
        std::vector<double> t_ns, gm_read_gbps, gm_write_gbps, sdma_gbps, l2_hit_rate;
    };
    Series series(size_t points) const;

private:
    void thread();
    void sample();
    void halve();
    uint64_t sdma_bytes() const;

    Soc& soc_;
    Tick interval_;
    TraceRecorder* trace_ = nullptr;
    int pid_ = 0;
    std::function<bool()> active_;
    sc_core::sc_event start_;
    Tick last_time_ = 0, first_time_ = 0;
    uint64_t last_read_ = 0, last_write_ = 0, last_hits_ = 0, last_misses_ = 0;
    std::vector<uint32_t> last_depth_;
    uint64_t last_sdma_ = 0;
    Series samples_;
    std::function<void(Tick)> progress_;
    std::chrono::milliseconds progress_every_{0};
    std::chrono::steady_clock::time_point next_progress_;
};

}  // namespace pfsim

#include "model/soc/sampler.h"

namespace pfsim {

Sampler::Sampler(sc_core::sc_module_name name, Soc& soc, Tick interval)
    : sc_module(name), soc_(soc), interval_(interval), last_depth_(soc.sdma.channels(), 0) {
    SC_HAS_PROCESS(Sampler);
    SC_THREAD(thread);
}

void Sampler::start(std::function<bool()> active) {
    if (!trace_) return;
    active_ = std::move(active);
    start_.notify(sc_core::SC_ZERO_TIME);
}

void Sampler::thread() {
    for (;;) {
        sc_core::wait(start_);
        last_time_ = sc_core::sc_time_stamp().value();
        const GmStats& g = soc_.gm.stats();
        last_read_ = g.read_bytes + g.uncached_read_bytes;
        last_write_ = g.write_bytes + g.uncached_write_bytes;
        last_hits_ = soc_.l2.stats().hits;
        last_misses_ = soc_.l2.stats().misses;
        do {
            sc_core::wait(sc_core::sc_time::from_value(interval_));
            sample();
        } while (active_());
    }
}

void Sampler::sample() {
    if (!pid_) pid_ = trace_->process("memory system", 0);
    const Tick now = sc_core::sc_time_stamp().value();
    const double seconds = static_cast<double>(now - last_time_) * 1e-12;
    const GmStats& g = soc_.gm.stats();
    const uint64_t read = g.read_bytes + g.uncached_read_bytes, write = g.write_bytes + g.uncached_write_bytes;
    trace_->counter(pid_, "GM read GB/s", now, "GB/s", static_cast<double>(read - last_read_) / seconds / 1e9);
    trace_->counter(pid_, "GM write GB/s", now, "GB/s", static_cast<double>(write - last_write_) / seconds / 1e9);
    const L2Stats& l = soc_.l2.stats();
    const uint64_t accesses = (l.hits - last_hits_) + (l.misses - last_misses_);
    trace_->counter(pid_, "L2 hit rate", now, "%",
                    accesses ? 100.0 * static_cast<double>(l.hits - last_hits_) / static_cast<double>(accesses) : 0.0);
    trace_->counter(pid_, "L2 lines held by prefetch", now, "lines", static_cast<double>(soc_.l2.lines_held_by_prefetch()));
    for (unsigned c = 0; c < soc_.sdma.channels(); ++c) {
        const uint32_t depth = soc_.sdma.queue_depth(c);
        if (depth != last_depth_[c] || depth) {
            trace_->counter(pid_, "SDMA queue depth ch " + std::to_string(c), now, "requests", depth);
        }
        last_depth_[c] = depth;
    }
    last_time_ = now;
    last_read_ = read;
    last_write_ = write;
    last_hits_ = l.hits;
    last_misses_ = l.misses;
}

}  // namespace pfsim

#include "model/soc/sampler.h"

namespace pfsim {

Sampler::Sampler(sc_core::sc_module_name name, Soc& soc, Tick interval)
    : sc_module(name), soc_(soc), interval_(interval), last_depth_(soc.sdma.channels(), 0) {
    SC_HAS_PROCESS(Sampler);
    SC_THREAD(thread);
}

void Sampler::start(std::function<bool()> active) {
    active_ = std::move(active);
    samples_ = Series{};
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
        first_time_ = last_time_;
        last_sdma_ = sdma_bytes();
        Tick step = interval_;
        next_progress_ = std::chrono::steady_clock::now() + progress_every_;
        do {
            sc_core::wait(sc_core::sc_time::from_value(step));
            sample();
            if (progress_ && std::chrono::steady_clock::now() >= next_progress_) {
                progress_(sc_core::sc_time_stamp().value() - first_time_);
                next_progress_ = std::chrono::steady_clock::now() + progress_every_;
            }
            if (samples_.t_ns.size() == kMaxSamples) {
                halve();
                step *= 2;
            }
        } while (active_());
    }
}

// Bytes the engine has moved so far: prefetched lines as they fill (so the rate
// follows the engine, not request completions) plus completed copies.
uint64_t Sampler::sdma_bytes() const {
    const L2Stats& l = soc_.l2.stats();
    return (l.prefetch_lines + l.prefetch_resident) * soc_.l2.line_bytes() + soc_.sdma.stats().copy_bytes;
}

void Sampler::sample() {
    const Tick now = sc_core::sc_time_stamp().value();
    const double seconds = static_cast<double>(now - last_time_) * 1e-12;
    const GmStats& g = soc_.gm.stats();
    const uint64_t read = g.read_bytes + g.uncached_read_bytes, write = g.write_bytes + g.uncached_write_bytes;
    const uint64_t sdma = sdma_bytes();
    const L2Stats& l = soc_.l2.stats();
    const uint64_t accesses = (l.hits - last_hits_) + (l.misses - last_misses_);
    const double hit_rate =
        accesses ? 100.0 * static_cast<double>(l.hits - last_hits_) / static_cast<double>(accesses) : 0.0;
    samples_.t_ns.push_back(static_cast<double>(now - first_time_) / 1e3);
    samples_.gm_read_gbps.push_back(static_cast<double>(read - last_read_) / seconds / 1e9);
    samples_.gm_write_gbps.push_back(static_cast<double>(write - last_write_) / seconds / 1e9);
    samples_.sdma_gbps.push_back(static_cast<double>(sdma - last_sdma_) / seconds / 1e9);
    samples_.l2_hit_rate.push_back(hit_rate);
    last_sdma_ = sdma;
    if (!trace_) {
        last_time_ = now;
        last_read_ = read;
        last_write_ = write;
        last_hits_ = l.hits;
        last_misses_ = l.misses;
        return;
    }
    if (!pid_) pid_ = trace_->process("memory system", 0);
    trace_->counter(pid_, "GM read GB/s", now, "GB/s", samples_.gm_read_gbps.back());
    trace_->counter(pid_, "GM write GB/s", now, "GB/s", samples_.gm_write_gbps.back());
    trace_->counter(pid_, "L2 hit rate", now, "%", hit_rate);
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

void Sampler::halve() {
    auto pairs = [](std::vector<double>& v, bool last) {
        for (size_t i = 0; 2 * i + 1 < v.size(); ++i) v[i] = last ? v[2 * i + 1] : (v[2 * i] + v[2 * i + 1]) / 2;
        v.resize(v.size() / 2);
    };
    pairs(samples_.t_ns, true);  // an interval ends at its second half's end
    pairs(samples_.gm_read_gbps, false);
    pairs(samples_.gm_write_gbps, false);
    pairs(samples_.sdma_gbps, false);
    pairs(samples_.l2_hit_rate, false);
}

Sampler::Series Sampler::series(size_t points) const {
    const size_t n = samples_.t_ns.size();
    if (n <= points) return samples_;
    Series out;
    auto reduce = [&](const std::vector<double>& from, std::vector<double>& to) {
        for (size_t i = 0; i < points; ++i) {
            const size_t a = i * n / points, b = (i + 1) * n / points;
            double sum = 0;
            for (size_t k = a; k < b; ++k) sum += from[k];
            to.push_back(sum / static_cast<double>(b - a));
        }
    };
    for (size_t i = 0; i < points; ++i) out.t_ns.push_back(samples_.t_ns[(i + 1) * n / points - 1]);
    reduce(samples_.gm_read_gbps, out.gm_read_gbps);
    reduce(samples_.gm_write_gbps, out.gm_write_gbps);
    reduce(samples_.sdma_gbps, out.sdma_gbps);
    reduce(samples_.l2_hit_rate, out.l2_hit_rate);
    return out;
}

}  // namespace pfsim

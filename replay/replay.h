// Replays a trace on the memory path: R and W go through L2 as a core's reads
// and writes would, one access after the other (each issued when the previous
// completes; the lines of one access are issued together). P prefetches its
// range through SDMA channel 0 exactly as the runtime would - requests written
// into the ring in GM, a doorbell write - and completes before the next access.
//
// The replay keeps the top of GM for channel 0's ring, and warms the channel
// before time zero of the measurement.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "model/config/config.h"
#include "model/memory/backing_store.h"
#include "model/soc/sampler.h"
#include "model/soc/soc.h"
#include "model/trace/recorder.h"
#include "replay/trace.h"

namespace pfsim {

struct ReplayOptions {
    // Carry bytes: writes store a pattern, every read is compared with a flat
    // reference memory. Without it no bytes move (nothing would observe them);
    // the timing and every counter are the same either way.
    bool verify = false;
    bool progress = false;  // progress lines on stderr
    TraceRecorder* trace = nullptr;  // each access as a slice, plus the SDMA engine and counters
    Tick sample_interval = 1000000;
};

struct ReplayResult {
    Tick sim_time = 0;          // from the first access to the last completion
    uint64_t accesses = 0;
    uint64_t line_accesses = 0;  // lines touched by R and W
    uint64_t mismatches = 0;     // reads that differed from the reference (verify)
    std::string first_mismatch;
    std::string error;           // an SDMA channel error, if one stopped a prefetch
    std::string trace_error;     // a bad trace line reached: the replay stopped before it
};

class Replay : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<Replay> cached;
    tlm_utils::simple_initiator_socket<Replay> uncached;
    tlm_utils::simple_initiator_socket<Replay> mmio;

    // The first GM address the replay keeps for its SDMA ring.
    static uint64_t ring_base(const Config& cfg);

    // Takes the accesses from `trace` as it replays them.
    Replay(sc_core::sc_module_name name, const Config& cfg, Soc& soc, TraceReader& trace,
           const ReplayOptions& options);

    const ReplayResult& result() const { return result_; }
    const Sampler& sampler() const { return sampler_; }

private:
    void run();
    void replay_all();
    void access(const TraceAccess& a, uint64_t index);
    void perform(const TraceAccess& a, uint64_t index);
    void prefetch(const TraceAccess& a);
    void transport(tlm_utils::simple_initiator_socket<Replay>& socket, bool write, uint64_t addr,
                   void* data, uint64_t len);
    void mmio_write(uint64_t addr, uint64_t value, unsigned bytes);
    void wait_channel_idle();
    void progress(uint64_t accesses, uint64_t* next_percent) const;
    void grow_pattern(uint64_t bytes);

    Soc& soc_;
    TraceReader& trace_;
    ReplayOptions options_;
    uint64_t line_bytes_, request_bytes_, ring_base_;
    uint32_t depth_;
    uint32_t tail_ = 0;
    std::vector<uint8_t> pattern_, scratch_, expected_;
    uint64_t pattern_state_ = 0x9E3779B97F4A7C15ull;
    BackingStore reference_;
    tlm::tlm_generic_payload payload_;
    tlm_utils::tlm_quantumkeeper keeper_;
    ReplayResult result_;
    Sampler sampler_;
    bool running_ = false;
    int trace_pid_ = 0, trace_lane_ = 0;
};

}  // namespace pfsim

// The runtime's platform bound to the pfsim model: one simulated die (GM, L2,
// SDMA engine, 24 cube and 48 vector cores). Host calls run in sc_main's
// context; launch() runs the simulation until every launched core is done.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "model/config/config.h"
#include "model/core/core.h"
#include "model/soc/sampler.h"
#include "model/soc/soc.h"
#include "model/trace/recorder.h"
#include "runtime/platform/platform.h"
#include "runtime/prefetch.h"

namespace pfsim {

struct SimFaults {
    bool prefetch_corrupt = false;  // flip one byte of the first line a prefetch fills
};

class SimPlatform : public sc_core::sc_module, public rt::Platform {
public:
    tlm_utils::simple_initiator_socket<SimPlatform> host_memory;  // to l2.uncached
    tlm_utils::simple_initiator_socket<SimPlatform> host_mmio;    // to sdma.mmio

    // gm_alloc rounds each allocation up to this many bytes (and starts each at a multiple of it).
    static constexpr uint64_t kAllocAlign = 4096;

    // `waves` (.vcd or .fst, or ""): where the RTL blocks in the loop
    // (sdma.frontend or l2.tags = rtl) dump their signals; with both, one file
    // each, named path-without-extension.BLOCK.ext (waves_files()). Throws
    // std::invalid_argument when there is no RTL block or a file cannot be written.
    SimPlatform(sc_core::sc_module_name name, const Config& cfg, const std::string& waves = "");

    Soc& soc() { return soc_; }
    const Soc& soc() const { return soc_; }
    const Config& config() const { return cfg_; }
    const std::vector<std::unique_ptr<Core>>& vector_cores() const { return aiv_; }
    const std::vector<std::unique_ptr<Core>>& cube_cores() const { return aic_; }
    SimFaults& faults() { return faults_; }
    // Record the cores, the SDMA engine and the memory counters of later launches.
    void attach_trace(TraceRecorder* trace);
    // The files the RTL blocks' signals go to.
    const std::vector<std::string>& waves_files() const { return waves_files_; }
    // Every rank's GM, by rank, for this die's cores to reach peers through
    // (SimDies; unset in a one-die simulation).
    void set_peer_gms(const std::vector<Core::PeerGm>* by_rank);
    // This die's GM as a peer's cores see it (its host mapping, what is allocated).
    Core::PeerGm gm_view() const;
    // end_graph in two steps, for several dies run at once (SimDies::end_graphs):
    // no more submissions (the scheduler is resumed to run the graph out), then,
    // once the simulation has run it to its end, the result.
    void close_submissions();
    bool graph_begun() const { return graph_ != nullptr; }   // begin_graph, and no result taken yet
    bool graph_active() const { return graph_active_; }      // its scheduler still runs it
    rt::GraphResult graph_result();
    const Sampler& sampler() const { return sampler_; }
    Sampler& sampler() { return sampler_; }

    std::string platform_name() const override { return "pfsim-a2a3"; }
    uint64_t gm_alloc(uint64_t bytes) override;
    void gm_free(uint64_t addr) override;
    // GM the die keeps for itself until it ends, carved from the top of GM
    // (below earlier reservations, each a multiple of kAllocAlign): gm_alloc
    // never hands it out and kernels cannot reach it. Throws std::runtime_error
    // when it would meet what gm_alloc handed out.
    uint64_t gm_reserve(uint64_t bytes);
    bool gm_allocated(uint64_t addr, uint64_t bytes) const override;
    void gm_write(uint64_t addr, const void* src, uint64_t bytes) override;
    void gm_read(uint64_t addr, void* dst, uint64_t bytes) override;
    void gm_zero(uint64_t addr, uint64_t bytes) override;
    uint64_t device_pointer(uint64_t addr) const override;
    uint32_t dma_workspace_supported_mask() const override;
    uint32_t dma_channel_count() const override;
    uint64_t l2_cache_offset() const override;
    uint32_t doorbell_tail_offset() const override;
    rt::ChannelGroups& channel_groups() override { return channel_groups_; }
    rt::KernelSide& kernel_side() override { return kernel_side_; }
    rt::SdmaQueue create_sdma_queue(uint32_t index) override;
    void destroy_sdma_queue(uint32_t index) override;
    uint32_t live_sdma_queues() const override;
    rt::LaunchResult launch(const rt::KernelEntries& entries, const rt::LaunchSpec& spec,
                            const std::vector<int64_t*>& args_per_core) override;
    uint32_t core_count() const override { return static_cast<uint32_t>(aic_.size() + aiv_.size()); }
    rt::CorePlace core_place(uint32_t core_id) const override;
    const Core& core(uint32_t core_id) const;  // by core id (core_place)
    // launch in two steps, for several dies at once (SimDies::launch): the
    // cores started, then, once the simulation has run them out, the result.
    struct Launched {
        std::vector<Core*> cores;
        std::vector<rt::CorePlace> places;
    };
    Launched start_launch(const rt::KernelEntries& entries, const rt::LaunchSpec& spec,
                          const std::vector<int64_t*>& args_per_core);
    rt::LaunchResult finish_launch(const Launched& launched);
    void begin_graph(rt::GraphLaunch& launch) override;
    bool run_graph_until(uint32_t task, uint64_t until_ps, uint64_t* end_ps) override;
    rt::GraphResult end_graph() override;
    void close_graph() override { close_submissions(); }
    uint64_t now_ps() const override;

private:
    // Wires each core's pointer loads to the L2's direct path (Core::attach_direct_reads).
    void end_of_elaboration() override;
    // The AICPU scheduler of run_graph (sim_scheduler.cc): a SystemC process.
    // The scheduler gives the simulation back to the orchestration (sc_pause)
    // when task pause_task_ completed, at pause_at_ps_ after the graph's start,
    // or when only new submissions can make progress; graph_resume_ resumes it.
    void scheduler();
    void check_new_tasks();  // the tasks appended since the last call can run (throws naming one)
    static constexpr uint32_t kNoTask = ~uint32_t{0};
    static constexpr uint64_t kNoTime = ~uint64_t{0};
    rt::GraphLaunch* graph_ = nullptr;
    size_t graph_checked_ = 0;
    rt::GraphResult graph_result_;
    // By task: when it completed (absolute), kNoTime while it has not: what the
    // orchestration's waits read, for any task, once its record is dropped too.
    std::deque<uint64_t> graph_end_ps_;
    bool graph_done(uint32_t task) const { return task < graph_end_ps_.size() && graph_end_ps_[task] != kNoTime; }
    uint64_t graph_t0_ = 0;
    uint32_t pause_task_ = kNoTask;
    uint64_t pause_at_ps_ = kNoTime;
    sc_core::sc_event graph_start_, graph_resume_;
    bool graph_active_ = false;
    void elaborate();
    // Gives back the host memory behind GM allocation [addr, + bytes), which
    // nothing reads again (BackingStore::release).
    void gm_release(uint64_t addr, uint64_t bytes);
    void host_transport(tlm_utils::simple_initiator_socket<SimPlatform>& socket, bool write, uint64_t addr,
                        void* data, uint64_t len);

    const Config& cfg_;
    CrossCoreFlags cross_flags_;
    std::vector<std::string> waves_files_;
    Soc soc_;
    Sampler sampler_;
    std::vector<std::unique_ptr<Core>> aiv_, aic_;
    // By core id, a bit each: the cores that notified their changed_event since the
    // scheduler last looked (Core::mark_changes_in).
    std::vector<uint64_t> changed_cores_;
    uint64_t next_free_;
    uint64_t reserved_from_ = 0;  // gm_reserve's lowest address; 0: nothing reserved
    std::vector<bool> queue_live_;
    std::vector<uint64_t> queue_ring_;
    SimFaults faults_;
    rt::ChannelGroups channel_groups_;
    rt::KernelSide kernel_side_;
    tlm::tlm_generic_payload payload_;
};

}  // namespace pfsim

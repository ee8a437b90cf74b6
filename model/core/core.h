// A simulated AI core (vector AIV or cube AIC): a SystemC process that runs C++
// kernels written against the kernel ABI (include/pfsim_kernel_abi.h).
//
// Timing: each pipe (scalar, MTE2, MTE3, vector, cube) keeps the time it is busy
// until. The scalar unit issues API calls in program order; loads, stores, vector
// and cube work start when their pipe is free and run asynchronously, as on the
// hardware; set_flag/wait_flag and barrier order them. The core runs ahead of
// SystemC time by at most core.quantum, and catches up before it looks at
// anything another process writes (polls).
#pragma once

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "base/zero_buffer.h"
#include "model/common/atomic_add.h"
#include "model/common/read_around_l2.h"
#include "model/common/scalar_read_target.h"
#include "model/common/tile_move_target.h"
#include "model/common/what_if.h"
#include "model/config/config.h"
#include "model/core/core_observer.h"
#include "pfsim_kernel_abi.h"
#include "model/core/cross_core_flags.h"
#include "model/core/scalar_data_cache.h"
#include "model/stats/stats.h"
#include "model/trace/recorder.h"

namespace pfsim {

using KernelFn = void (*)(int64_t* args);

// What one core has done since it was built (times in ps).
#define PFSIM_CORE_STATS(COUNTER, FORMULA)                                                          \
    COUNTER(scalar, "ps", "scalar pipe busy (scalar ops, raw `__gm__` accesses, request building)") \
    COUNTER(mte2, "ps", "MTE2 busy (GM to UB/L1 loads)")                                            \
    COUNTER(mte3, "ps", "MTE3 busy (UB to GM stores)")                                              \
    COUNTER(vector, "ps", "vector pipe busy")                                                      \
    COUNTER(cube, "ps", "cube pipe busy (MMAD)")                                        \
    COUNTER(prefetch_wait, "ps", "time in prefetch waits")                                         \
    COUNTER(prefetch_waits, "count", "prefetch waits (and waits for a flag slot) that polled")      \
    COUNTER(prefetch_polls, "count", "post-done record reads of those waits")                       \
    COUNTER(prefetch_wait_timeouts, "count", "waits that ran out of polls (prefetch.poll_limit) and returned false") \
    COUNTER(cross_core_wait, "ps", "time in wait_flag_dev (TPOP, a full TPUSH)")                    \
    COUNTER(l2_stall, "ps", "load and store time beyond the pipe's own rate (misses)")             \
    COUNTER(load_bytes, "bytes", "bytes loaded by MTE2")                                           \
    COUNTER(store_bytes, "bytes", "bytes stored by MTE3")                                          \
    COUNTER(scalar_load_bytes, "bytes", "bytes of raw `__gm__` loads")                             \
    COUNTER(scalar_store_bytes, "bytes", "bytes of raw `__gm__` stores")                           \
    COUNTER(dcache_hits, "count", "scalar data-cache lines a GM load or store found (core.dcache)")  \
    COUNTER(dcache_misses, "count", "scalar data-cache lines a GM load fetched from the L2")        \
    COUNTER(dcache_writebacks, "count", "dirty scalar data-cache lines written back to the L2")
PFSIM_STATS(CoreStats, PFSIM_CORE_STATS)

// The busy-time counter of `pipe`.
uint64_t& busy_time(CoreStats& s, Pipe pipe);

struct CoreRun {
    bool ran = false;
    Tick entered = 0;   // first instruction of kernel_entry
    Tick returned = 0;  // every pipe drained after return
    std::string error;  // a KernelError or exception the kernel raised
    bool fatal = false; // the kernel faulted, ran past the host-time limit, or called exit: the run ends
    std::vector<std::string> violations;  // what protocol checkers reported
};

// "file:line" of the innermost frame of the calling stack in a kernel's own
// source ("" when none is known): one symbolizer run per distinct call path.
std::string calling_kernel_line();

class Core;
// The core whose kernel is running (null: none), without current_core()'s
// entry work (a pending raw store applied, a requested stop honoured).
Core* running_core();

class Core : public sc_core::sc_module, public CoreOps {
public:
    tlm_utils::simple_initiator_socket<Core> cached;
    tlm_utils::simple_initiator_socket<Core> uncached;
    tlm_utils::simple_initiator_socket<Core> mmio;
    tlm_utils::simple_initiator_socket<Core> peers;  // to the die's link: peer windows (model/common/peer_window.h)

    Core(sc_core::sc_module_name name, const Config& cfg, CoreKind kind, uint32_t id);

    // Host side: run `fn(args)` on this core `delay` after the current SystemC
    // time.
    void start(KernelFn fn, int64_t* args, uint32_t block_idx, uint32_t block_num, uint32_t subblock,
               Tick delay = 0);
    // Fires (a delta later) when the kernel has returned and its pipes drained
    // (running() is false), or when it blocks in a cross-core wait no set has
    // been made for yet (blocked_on() names the flag while no set is on its way
    // to it, "" otherwise). Each notify is followed by a wait of the core's
    // thread, so it is notified at most once per evaluation phase.
    const sc_core::sc_event& changed_event() const { return changed_; }
    // With each notify of changed_event(), also sets bit core_id() of `bits` (64 cores a
    // word): which cores a waiter woken by the events has to look at.
    void mark_changes_in(uint64_t* bits) { changed_bits_ = bits; }
    std::string blocked_on() const;
    // The wait_flag_dev a running kernel is in, blocked or not: "wait_flag_dev(N)", and
    // when a set is on its way to it, when it arrives ("" when it is in none).
    std::string in_flag_wait() const;
    // What a kernel in TWAIT waits for, the signal's value and its last writer
    // ("" when it is not in one). Unlike a cross-core flag, another die may
    // still write the signal: this is never a deadlock by itself.
    std::string waiting_on() const;
    // The kernel's source line of the TWAIT it is in ("" when unknown or in none).
    std::string waiting_at() const { return signal_wait_.active ? signal_wait_.line : ""; }
    // Makes the running kernel stop at its next call into the core or GM
    // access (a KernelError naming `why`); a kernel that does neither runs on.
    void request_stop(const std::string& why) {
        stop_ = why;
        g_counter_fast = nullptr;  // the next read honours it
        stop_event_.notify(sc_core::SC_ZERO_TIME);
    }
    // Throws the KernelError of a requested stop (called at every entry into the core).
    void check_stop();
    // One read of the system counter after current_core()'s checks: a scalar op,
    // then the counter at the new issue time; arms the fast path (pfsim_kernel_abi.h).
    uint64_t read_counter();
    // Fault injection: asked at each kernel start; a non-empty answer makes
    // that kernel trap (stop, naming it) at its first call into the core.
    void set_trap(std::function<std::string()> trap) { trap_ = std::move(trap); }
    const CoreRun& last_run() const { return run_; }
    const CoreStats& stats() const { return stats_; }
    // The warnings raised since the last take (each once), handed over and
    // forgotten: a launch's or graph's result carries only its own.
    std::vector<std::string> take_warnings() { return std::exchange(warnings_, {}); }

    // CoreOps
    CoreKind core_kind() const override { return kind_; }
    uint32_t block_idx() const override { return block_idx_; }
    uint32_t block_num() const override { return block_num_; }
    uint32_t subblock_idx() const override { return subblock_; }
    uint32_t subblock_register() const override { return subblock_register_zero_ ? 0 : subblock_; }
    uint32_t core_id() const override { return id_; }
    int64_t* kernel_args() const override { return args_; }
    uint64_t gm_address(const volatile void* p, uint64_t bytes) const override;
    uint64_t device_pointer(uint64_t gm) const override { return reinterpret_cast<uintptr_t>(gm_host_) + gm; }
    uint64_t l2_cache_offset() const override { return alias_offset_; }
    uint64_t gm_alias_address(const volatile void* p, uint64_t bytes) const override;
    void scalar_read(uint64_t gm, void* dst, uint64_t bytes) override;
    void scalar_write(uint64_t gm, const void* src, uint64_t bytes) override;
    void dcci(const volatile void* line, bool entire) override;
    // Where this die's GM is mapped in host memory (BackingStore::host_base).
    void set_gm_window(uint8_t* host_base, uint64_t size) { gm_host_ = host_base; gm_size_ = size; }
    // The direct path of the kernel's pointer loads from this die's GM: `l2`,
    // the target of the `cached` socket, which numbers this core `initiator`
    // there (set once wired, at the end of elaboration). Unset: those loads
    // take the socket, as scalar_read() does. Either way they read and time
    // alike (tests/python/test_scalar_read_path.py).
    void attach_direct_reads(ScalarReadTarget* l2, int initiator) {
        direct_reads_ = l2;
        direct_initiator_ = initiator;
    }
    // The direct path of the tile moves' plain lines in this die's GM: `l2`, the
    // same target and `initiator` as attach_direct_reads(). Unset: they take
    // the socket. Either way they move and time alike.
    void attach_direct_moves(TileMoveTarget* l2, int initiator) {
        direct_moves_ = l2;
        direct_initiator_ = initiator;
    }
    // Every rank's GM in host memory, by rank (this die's own among them): a
    // kernel's pointer into another rank's GM is that rank's peer window, its
    // accesses cross the link. Unset (one die): such a pointer is not GM.
    struct PeerGm {
        uint8_t* host = nullptr;
        uint64_t size = 0;
        uint64_t alloc_begin = 0;            // what the rank allocated: [alloc_begin, *alloc_end)
        const uint64_t* alloc_end = nullptr;
        // The rank's communication windows in its GM, each [begin, begin +
        // bytes) (a CommContext's window, winSize bytes), ordered by begin:
        // while any is set, an access from another die must lie in one of them.
        std::vector<std::pair<uint64_t, uint64_t>> windows;
    };
    void set_peer_gms(const std::vector<PeerGm>* by_rank) { peer_gms_ = by_rank; }
    // What is allocated in GM: [begin, *end). A pointer access in GM outside it
    // faults the kernel. Unset: all of GM.
    void set_gm_allocated(uint64_t begin, const uint64_t* end) { alloc_begin_ = begin; alloc_end_ = end; }
    // Who is told about the kernels this core runs (null: nobody).
    // Checkers watching the kernels this core runs (each told every event, in the order added).
    void add_observer(CoreObserver* observer) { observers_.push_back(observer); }
    void remove_observer(CoreObserver* observer) {
        observers_.erase(std::remove(observers_.begin(), observers_.end(), observer), observers_.end());
    }
    // What the running kernel is part of ("task 3 (aiv, func 1) block 0"), for reports.
    void set_task_label(std::string label) { task_label_ = std::move(label); }
    const std::string& task_label() const { return task_label_; }
    // The buffers of the running task's tensor arguments (args[arg] -> its
    // buffer's device pointer and bytes), for checkers; empty when unknown (a
    // single launch gives raw arguments).
    struct ArgBuffer {
        uint32_t arg = 0;
        uint64_t pointer = 0, bytes = 0;
    };
    void set_task_buffers(std::vector<ArgBuffer> buffers) { task_buffers_ = std::move(buffers); }
    const std::vector<ArgBuffer>& task_buffers() const { return task_buffers_; }
    // UB as the kernel left it (empty on a core without one).
    const ZeroBuffer& ub() const { return buffers_[static_cast<size_t>(Buffer::Ub)]; }
    // The die's cross-core flags (unset: a kernel that uses them fails).
    void set_cross_core_flags(CrossCoreFlags* flags) { cross_flags_ = flags; }
    // A kernel's load or store of [addr, addr + len) through a raw pointer, as
    // the instrumentation of run-time compiled kernels reports it (before the
    // access): GM accesses take the scalar path; anything else is not timed.
    static void on_raw_access(bool write, uintptr_t addr, uint64_t len);
    // Forgets who last notified each signal (the host, before a run).
    static void forget_signal_writers();
    // A raw store reported before it happened is applied to the model at the
    // next call into the core (current_core()) or when the kernel returns.
    void apply_raw_store();
    uint8_t* buffer(Buffer b, uint64_t offset, uint64_t bytes) override;
    void load(uint64_t gm, uint8_t* local, uint64_t bytes) override;
    void load_around_l2(uint64_t gm, uint8_t* local, uint64_t bytes) override;
    void store(uint64_t gm, const uint8_t* local, uint64_t bytes) override;
    void store_add(uint64_t gm, const uint8_t* local, uint64_t bytes, AtomicElement element) override;
    void vector(uint64_t bytes) override;
    void vector_special(uint64_t bytes) override;
    void make_resident(uint64_t gm, uint64_t bytes) override;
    // What-if: the loads made from these "file:line" sites of the kernels'
    // sources find their region resident (make_resident) first; setting them
    // starts their counts afresh.
    void set_warm_load_sites(std::vector<std::string> sites) {
        warm_load_sites_ = std::move(sites);
        warmed_load_counts_.clear();
    }
    // How many loads of this core each warm load site warmed.
    const std::map<std::string, uint64_t>& warmed_load_counts() const { return warmed_load_counts_; }
    // What-if: the loads made from these sites read around the L2 (as through
    // GM's uncached alias); around_load_counts() counts this core's per site.
    void set_around_load_sites(std::vector<std::string> sites) {
        around_load_sites_ = std::move(sites);
        around_load_counts_.clear();
    }
    const std::map<std::string, uint64_t>& around_load_counts() const { return around_load_counts_; }
    void set_vector_mask_mode(bool counter) override;
    void set_vector_mask(uint64_t high, uint64_t low) override;
    void cube(uint64_t macs, CubeOperand operand) override;
    void move_local(Buffer from, Buffer to, uint64_t bytes) override;
    void scalar(uint64_t ops) override;
    void set_flag(Pipe src, Pipe dst, int event) override;
    void wait_flag(Pipe src, Pipe dst, int event) override;
    void barrier() override;
    void cross_core_set(Pipe pipe, uint64_t config) override;
    void cross_core_wait(int flag) override;
    void signal_notify(const volatile int32_t* signal, int32_t value, bool add) override;
    void signal_wait(const volatile int32_t* signal, int32_t expected, int cmp) override;
    uint64_t allocated_gm(const char* instruction, const char* what, const volatile void* p, uint64_t bytes) const override;
    void uncached_write(uint64_t gm, const void* src, uint64_t bytes) override;
    void uncached_read(uint64_t gm, void* dst, uint64_t bytes) override;
    void mmio_write32(uint64_t addr, uint32_t value) override;
    void flush() override;
    void flush_line(uint64_t gm) override;
    void build_request() override;
    void spend(uint64_t ps) override;
    void note_prefetch_post(uint64_t since_ps, uint64_t flow, uint64_t addr, uint64_t bytes) override;
    void note_prefetch_wait(uint64_t since_ps, uint64_t flow, bool done, uint64_t polls) override;
    // Record this core's pipes and prefetch activity into `trace` (null: off).
    void attach_trace(TraceRecorder* trace) {
        trace_ = trace;
        trace_pid_ = 0;  // a new recorder names its processes again
    }
    bool running() const { return running_; }
    uint64_t now_ps() override { return issue_; }
    void timed_pass_begin() override { timed_begin_ps_ = issue_; }
    void timed_pass_end(uint64_t bytes) override {
        timed_.intervals.push_back({timed_begin_ps_, issue_});
        timed_.bytes += bytes;
    }
    // Every timed pass this core ended, [begin, end) in ps, and the bytes it said they moved.
    struct TimedPasses {
        std::vector<std::pair<uint64_t, uint64_t>> intervals;
        uint64_t bytes = 0;
    };
    const TimedPasses& timed_passes() const { return timed_; }
    void warn(const std::string& message) override;
    void peek(uint64_t gm, void* dst, uint64_t bytes) override;
    void report_violation(const std::string& message) override;

private:
    void thread();
    // Occupies `pipe` for `duration` from when both it and the scalar unit are free.
    void occupy(Pipe pipe, Tick duration);
    // A GM load or store on `pipe`: start-up, then lines at the pipe's rate.
    void transfer(Pipe pipe, bool write, uint64_t gm, uint8_t* local, uint64_t bytes, double bandwidth);
    // Moves [gm, gm + bytes) line by line with at most core.outstanding_lines in flight.
    Tick move(Pipe pipe, bool write, uint64_t gm, uint8_t* local, uint64_t bytes, Tick start);
    Tick transport(tlm_utils::simple_initiator_socket<Core>& socket, bool write, uint64_t addr,
                   void* data, uint64_t len, Tick issue);
    void catch_up(Tick until);  // SystemC time to `until`
    void notify_changed();      // changed_event(), and the core's bit where mark_changes_in asked
    void hold_within_quantum(Tick start);
    void maybe_sync();
    // A pointer load of [gm, gm + bytes) in this die's GM through the direct
    // path: scalar_read() of the bytes where they are, without copying them.
    void scalar_read_in_place(uint64_t gm, uint64_t bytes);
    // The scalar unit's read of [gm, gm + bytes): when it is done. Each L2
    // line's part is read through `read_line(address, bytes)` (its completion
    // time); with `through_dcache`, each data-cache line's part is a hit (the
    // hit latency, no L2 access) or a miss that reads the whole data-cache
    // line through read_line and installs it.
    template <typename ReadLine>
    Tick scalar_read_lines(uint64_t gm, uint64_t bytes, bool through_dcache, ReadLine read_line);
    // Whether a scalar access of `gm` goes through the data cache: this die's
    // GM with the cache on (a peer's window is read through the link).
    bool through_dcache(uint64_t gm) const;
    // Writes the data-cache line at `line` back to the L2 (GM's bytes, which
    // hold its value): issued at the scalar unit's time, not waited for.
    void write_back(uint64_t line);
    // dcci of the line holding `gm`: it leaves the data cache, written back if dirty.
    void invalidate_line(uint64_t gm);
    // Then the scalar unit waits until `done` for the read's `bytes`.
    void scalar_read_done(Tick done, uint64_t bytes);
    // Arms g_counter_fast, which also arms fast_load_hit(), when the next
    // access would have nothing else to do (see CounterFastPath).
    void arm_fast_paths();
    // A raw load of [gm, gm + len) on the armed fast path: when it hits one
    // data-cache line and needs no synchronisation, makes exactly the full
    // path's changes (the line's LRU place, the counters, the scalar unit's
    // time) and returns true; otherwise changes nothing and returns false.
    bool fast_load_hit(uint64_t gm, uint64_t len);
    // load() and load_around_l2(), and the load-site what-ifs.
    void load_from(uint64_t gm, uint8_t* local, uint64_t bytes, bool around);
    Tick drained() const;

    const CoreKind kind_;
    const uint32_t id_;
    const bool subblock_register_zero_;  // core.subblock_register = zero
    TimedPasses timed_;
    uint64_t timed_begin_ps_ = 0;
    uint32_t block_idx_ = 0, block_num_ = 0, subblock_ = 0;
    const Tick scalar_op_, transfer_setup_, flush_cost_, request_build_, quantum_, signal_poll_, wait_limit_;
    const double load_bw_, store_bw_, vector_bw_, vector_special_factor_;
    const uint64_t cube_macs_per_cycle_, cube_macs_int8_, cube_macs_fp32_, line_bytes_;
    const double l1_l0a_bw_, l1_l0b_bw_, l1_ub_bw_, l0c_bw_;
    const double clock_hz_;
    std::array<ZeroBuffer, 5> buffers_;  // indexed by Buffer; empty = absent
    std::array<uint64_t, 5> align_{};              // a tile's offset alignment in each buffer
    std::array<std::vector<Tick>, 5> inflight_;    // per pipe: completion times, one per line in flight
    Tick issue_ = 0;                               // scalar unit: next issue time
    CounterFastPath counter_fast_{};               // armed by read_counter() (pfsim_kernel_abi.h)
    std::array<Tick, 5> pipe_{};                   // busy-until per pipe (all data in)
    std::array<Tick, 5> streaming_{};              // move engines: streaming until
    std::array<size_t, 5> inflight_next_{};
    // The last transfer's transfer_time(bytes, bandwidth): a run of equal
    // transfers (a tile's rows) divides once.
    struct {
        uint64_t bytes;
        double bandwidth;
        Tick time;
    } pace_{0, 0.0, 0};
    std::array<std::array<std::array<Tick, 8>, 5>, 5> flags_{};
    KernelFn fn_ = nullptr;
    int64_t* args_ = nullptr;
    sc_core::sc_event start_, changed_;
    uint64_t* changed_bits_ = nullptr;
    CoreRun run_;
    CoreStats stats_;
    std::vector<std::string> warnings_;
    tlm::tlm_generic_payload payload_;
    int payload_extensions_ = 0;  // how many extensions a ScopedExtension (core.cc) has on payload_ now
    AtomicAddExtension atomic_add_;  // on payload_ during a store_add
    bool running_ = false;
    // Tracing: this core's process, its lanes (one per Pipe but All, then the
    // prefetch-wait lane), and the posts not yet waited on. A call site on a
    // per-instruction or per-transfer path tests trace_ before it builds its
    // strings (formatting them for no trace was a few per cent of a large run).
    enum { kWaitLane = 5 };
    void trace_slice(int lane, const std::string& name, Tick start, Tick end, const std::string& args = "");
    TraceRecorder* trace_ = nullptr;
    int trace_pid_ = 0;
    std::array<int, 6> trace_lane_{};
    struct PendingPost {
        Tick start;
        uint64_t addr, bytes;
    };
    std::map<uint64_t, PendingPost> pending_posts_;
    uint8_t* gm_host_ = nullptr;
    ScalarReadTarget* direct_reads_ = nullptr;  // attach_direct_reads()
    TileMoveTarget* direct_moves_ = nullptr;    // attach_direct_moves()
    int direct_initiator_ = -1;
    const std::vector<PeerGm>* peer_gms_ = nullptr;
    struct SignalWait {
        bool active = false;
        uint64_t gm = 0;
        int32_t expected = 0;
        int cmp = 0;
        int32_t value = 0;  // as last read
        std::string line;   // the kernel's source line of the TWAIT, when known
    };
    SignalWait signal_wait_;
    uint8_t* host_of(uint64_t gm) const;  // where GM address gm (this die's or a peer window's) is in host memory
    uint64_t alloc_begin_ = 0;
    const uint64_t* alloc_end_ = nullptr;
    uint64_t gm_size_ = 0;
    uint64_t raw_store_gm_ = 0, raw_store_len_ = 0;  // a raw store not yet applied
    std::vector<std::string> warm_load_sites_, around_load_sites_;
    std::map<std::string, uint64_t> warmed_load_counts_, around_load_counts_;
    ResidentExtension resident_;
    ReadAroundL2Extension read_around_;
    bool mask_counter_ = false;                      // the vector mask register
    uint64_t mask_high_ = ~uint64_t{0}, mask_low_ = ~uint64_t{0};
    void check_vector_mask() const;
    std::string stop_;                               // request_stop's reason, until the kernel has stopped
    std::function<std::string()> trap_;
    sc_core::sc_event stop_event_;                   // wakes a kernel blocked in a cross-core wait
    // The flag of the wait_flag_dev the kernel is in (-1: none), and whether it is
    // blocked there, in a wait no set was on its way to when it began.
    int flag_wait_ = -1;
    bool flag_blocked_ = false;
    CrossCoreFlags* cross_flags_ = nullptr;
    std::vector<CoreObserver*> observers_;
    std::string task_label_;
    std::vector<ArgBuffer> task_buffers_;
    const Tick cross_latency_;
    const Tick dcci_line_;
    const uint64_t alias_offset_;  // gm.l2_cache_offset
    std::optional<ScalarDataCache> dcache_;  // core.dcache; empty: off (every scalar access goes to the L2)
    const Tick dcache_hit_;                   // core.dcache_hit_latency
};

}  // namespace pfsim

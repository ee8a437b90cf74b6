// The L2 cache of one die: set-associative, write-back, write-allocate, with an
// l2.replacement policy, shared by every core and the SDMA engine.
//
// TLM-2.0 sockets (LT: the delay argument is the issue time relative to
// sc_time_stamp() on entry and the completion time on return):
//   cached    - core reads and writes; each line touched counts one hit or miss
//               (a null data pointer: timed and counted alike, no bytes moved);
//               a read with a ReadAroundL2Extension (model/common/read_around_l2.h)
//               allocates nothing and counts a bypass line instead
//   uncached  - reads and writes straight to GM, coherent with resident lines,
//               allocating nothing and counting no hit or miss; its debug
//               transport (transport_dbg) does the same taking no time
//   prefetch  - SDMA cache-maintenance fills of [address, address + length):
//               no data pointer; a PrefetchPacing extension says when the engine
//               finishes moving the bytes, and the lines become ready along the way;
//               one with `probe` set only counts the range's resident bytes
//   gm_data, gm_uncached - to GlobalMemory
//
// Values: data is moved when a transaction is called, so a read always returns
// the latest value written before it in simulation order. They live in GM (see
// values()): the L2 keeps tags, dirty bits and times, not a copy of the bytes. Timing: each line has a
// "ready" time (a miss or fill in flight); a hit on such a line waits for it.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/multi_passthrough_target_socket.h>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "base/zero_buffer.h"
#include "model/common/atomic_add.h"
#include "model/common/calendar.h"
#include "model/common/memory_target.h"
#include "model/common/scalar_read_target.h"
#include "model/common/tile_move_target.h"
#include "model/config/config.h"
#include "model/l2/l2_observer.h"
#include "model/l2/same_line.h"
#include "model/l2/tag_store.h"
#include "model/stats/stats.h"

namespace pfsim {

// Attached by the SDMA engine to prefetch transactions.
struct PrefetchPacing : tlm::tlm_extension<PrefetchPacing> {
    Tick engine_done = 0;  // absolute time the engine has moved every byte
    // The engine's residency check: with `probe` set the L2 changes nothing and
    // only answers how many bytes of the range's lines are resident.
    bool probe = false;
    uint64_t resident_bytes = 0;
    tlm::tlm_extension_base* clone() const override { return new PrefetchPacing(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        const auto& o = static_cast<const PrefetchPacing&>(other);
        engine_done = o.engine_done;
        probe = o.probe;
        resident_bytes = o.resident_bytes;
    }
};

#define PFSIM_L2_STATS(COUNTER, FORMULA)                                                                    \
    COUNTER(hits, "lines", "cached-path line accesses (core loads and stores) that found the line resident")  \
    COUNTER(misses, "lines", "cached-path line accesses that did not (a refill from GM, none for a full-line write)") \
    FORMULA(hit_rate, "ratio", "hits / (hits + misses)", ::pfsim::ratio(s.hits, s.hits + s.misses))             \
    COUNTER(writebacks, "lines", "dirty lines written back to GM when evicted")                                 \
    COUNTER(prefetch_lines, "lines", "lines a prefetch filled from GM")                                        \
    COUNTER(prefetch_resident, "lines", "lines a prefetch found already resident (nothing moved)")            \
    COUNTER(read_lines, "lines", "cached-path line reads (hits and misses)")                                  \
    COUNTER(write_lines, "lines", "cached-path line writes (hits and misses)")                                \
    COUNTER(read_bytes, "bytes", "bytes read on the cached path")                                             \
    COUNTER(write_bytes, "bytes", "bytes written on the cached path")                                         \
    COUNTER(bypass_lines, "lines", "cached-path line reads around the L2 (a load through GM's uncached alias): none allocated, none evicted") \
    COUNTER(bypass_hits, "lines", "of those, lines found resident (read as a hit, the replacement state unchanged)")             \
    COUNTER(uncached_read_bytes, "bytes", "bytes read on the uncached path (through to GM, coherent with L2)") \
    COUNTER(uncached_write_bytes, "bytes", "bytes written on the uncached path (through to GM, resident lines updated)")
PFSIM_STATS(L2Stats, PFSIM_L2_STATS)

class L2Cache;

// The cached socket: it numbers each initiator bound to it (the `id` of its calls).
class CachedTargetSocket : public tlm_utils::multi_passthrough_target_socket<L2Cache> {
public:
    explicit CachedTargetSocket(const char* name) : multi_passthrough_target_socket(name) {}
    // The number of the initiator socket `port` bound to this one, or -1 when it
    // is not bound here. Known from the end of elaboration on.
    int initiator_of(const sc_core::sc_port_base& port) {
        const auto& binders = get_binders();
        for (size_t id = 0; id < binders.size(); ++id) {
            if (binders[id]->get_other_side() == &port) return static_cast<int>(id);
        }
        return -1;
    }
};

class L2Cache : public sc_core::sc_module, public ScalarReadTarget, public TileMoveTarget {
public:
    CachedTargetSocket cached;
    tlm_utils::multi_passthrough_target_socket<L2Cache> uncached;
    tlm_utils::simple_target_socket<L2Cache> prefetch;
    tlm_utils::simple_initiator_socket<L2Cache> gm_data;
    tlm_utils::simple_initiator_socket<L2Cache> gm_uncached;

    // `waves` (.vcd or .fst): with l2.tags = rtl, where the RTL tag pipeline's signals go.
    L2Cache(sc_core::sc_module_name name, const Config& cfg, const std::string& waves = "");

    const L2Stats& stats() const { return stats_; }
    uint64_t line_bytes() const { return line_bytes_; }
    uint64_t sets() const { return sets_; }
    uint64_t ways() const { return ways_; }
    uint64_t set_of(uint64_t addr) const;
    bool resident(uint64_t addr) const { return find(addr >> line_shift_) >= 0; }
    bool dirty(uint64_t addr) const;
    // A hint: the line holding `addr` is accessed soon; the host may start
    // loading its set's state into its cache. Changes nothing the model computes.
    void warm_host_cache(uint64_t addr) const;
    // The caller's promise: every cached-path access comes from one initiator,
    // each issued no earlier than the previous one completed (as the replay
    // runs a trace). Its hits then never wait on a same-line port (a port would
    // hold only that initiator's earlier slots, all before the hit's own), so
    // the ports are not kept: the same times, without the port a hit would load.
    // An access breaking the promise is an internal error (std::logic_error).
    void promise_one_sequential_initiator() { sequential_.promised = true; }
    // ScalarReadTarget: a cached-path read of part of one line, its bytes read
    // in place by the caller.
    Tick read_in_place(int initiator, uint64_t addr, uint64_t len, Tick issue) override;
    // TileMoveTarget: a plain cached-path read or write.
    bool move_line(int initiator, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue,
                   Tick& done) override;
    void move_values(bool write, uint64_t addr, uint8_t* buf, uint64_t len) override { values(write, addr, buf, len); }
    // Lines currently resident that a prefetch brought in and no core has touched yet.
    uint64_t lines_held_by_prefetch() const { return prefetched_untouched_; }

    // Refills and write-backs go straight to `gm` instead of through the gm_data
    // socket, and each access's bytes instead of through gm_uncached's debug
    // transport (same effects, less overhead). Set once, when wiring.
    void attach_direct(MemoryTarget* gm) { direct_ = gm; }
    // Who is told about prefetched lines, demand accesses and evictions (null: nobody).
    void set_observer(L2Observer* observer) { observer_ = observer; }

    // What-if (model/common/what_if.h): [addr, addr + len) resident from `at`
    // on, at no cost.
    void install(uint64_t addr, uint64_t len, Tick at);

    // Fault injection (negative control): flip one byte of the next line a
    // prefetch fills.
    void corrupt_next_prefetch_fill() { corrupt_next_fill_ = true; }
    bool corruption_pending() const { return corrupt_next_fill_; }  // asked for, no prefetch fill since

private:
    enum class Index { Modulo, Xor };

    void transport_cached(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    // A cached-path access of [addr, addr + len) (in GM) by initiator `id`, as
    // transport_cached serves it after reading the payload: returns its
    // completion time. `buf` null: no bytes moved.
    Tick cached_access(int id, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue,
                       const AtomicAddExtension* atomic, bool around);
    // Keeps promise_one_sequential_initiator()'s check of an access by `id` at `issue`.
    void check_sequential(int id, Tick issue);
    void transport_uncached(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    void transport_prefetch(tlm::tlm_generic_payload& p, sc_core::sc_time& delay);
    // Debug access (no time, no counts).
    unsigned debug_uncached(int id, tlm::tlm_generic_payload& p);
    // The bytes of [addr, addr + len), read into or written from `buf`: GM's,
    // through its debug transport. The L2 holds no copy of them: a resident line
    // holds GM's bytes while clean, and while dirty it holds what GM is to get,
    // so keeping the values in GM at once gives every reader the bytes a
    // data-carrying cache would (the model is coherent: uncached accesses and
    // the engine's copies see resident lines' bytes). What the L2 decides —
    // hits, fills, write-backs, their timing — is unchanged.
    void values(bool write, uint64_t addr, uint8_t* buf, uint64_t len);

    // One core access to part of one line. Returns its completion time. With
    // `atomic`, a write adds its elements to the line's (so it needs the line's
    // data even when it covers the whole line). A null `buf` moves no bytes.
    Tick access_line(int initiator, uint64_t line, bool write, uint8_t* buf, uint64_t offset, uint64_t len, Tick issue,
                     const AtomicAddExtension* atomic);
    // One core read of part of one line around the L2 (ReadAroundL2Extension):
    // no allocation, no eviction, no replacement update. Returns its completion time.
    Tick read_around(int initiator, uint64_t line, uint8_t* buf, uint64_t offset, uint64_t len, Tick issue);
    // A demand miss's round trip from `start`: a miss register, the GM read of
    // `len` bytes at `addr` on the path named (none when `len` is 0), the L2's miss handling.
    Tick miss_round_trip(bool cached_path, uint64_t addr, uint64_t len, Tick start);
    // The slot that `t` (an access of a line of `set`) names, after writing back
    // the line it replaced if that one was dirty.
    int64_t take_slot(uint64_t set, uint64_t line, const TagResult& t, Tick when, bool by_prefetch);
    // The slot holding `line`, or -1.
    int64_t find(uint64_t line) const;
    Tick reserve_slice(uint64_t set, bool write, uint64_t bytes, Tick when);
    Tick gm_access(bool cached_path, bool write, uint64_t addr, uint8_t* buf,
                   uint64_t len, Tick issue);
    bool in_gm(uint64_t addr, uint64_t len) const { return addr <= gm_size_ && len <= gm_size_ - addr; }

    uint64_t line_bytes_;
    unsigned line_shift_;  // log2(line_bytes_): the hot paths shift, not divide
    uint64_t ways_, sets_, slices_, gm_size_;
    unsigned set_bits_;
    Index index_;
    const bool ideal_demand_;  // l2.demand = ideal
    Tick hit_latency_, miss_latency_, same_line_interval_;
    double slice_read_bw_, slice_write_bw_;

    std::unique_ptr<TagStore> tags_;  // which line each slot holds, dirty bits, LRU
    // Per slot (set * ways + way): ready time, "filled by prefetch and untouched" bit.
    ZeroArray<Tick> ready_;
    ZeroArray<uint8_t> prefetched_;
    L2Observer* observer_ = nullptr;
    SameLinePorts same_line_;  // per slot: hits from different initiators one at a time
    struct {
        bool promised = false;
        int initiator = -1;  // the one seen, once one was
        Tick last_done = 0;
    } sequential_;  // promise_one_sequential_initiator()

    std::vector<Calendar> slice_read_, slice_write_;
    Calendar mshrs_;      // l2.max_outstanding_misses misses in flight at once
    Tick miss_estimate_;  // how long a miss holds its MSHR, when reserving it
    uint64_t prefetched_untouched_ = 0;
    bool corrupt_next_fill_ = false;
    MemoryTarget* direct_ = nullptr;
    double slice_read_ps_per_byte_, slice_write_ps_per_byte_;
    tlm::tlm_generic_payload gm_payload_, values_payload_;
    L2Stats stats_;
};

}  // namespace pfsim

// The kernel ABI: what a running kernel can ask of the core it runs on, the
// simulated core's instruction set as seen from C++ kernels. No SystemC here:
// kernels and the kernel API (this include set) include only this header; the
// model's Core (model/core/core.h) implements CoreOps, and the loader sets the
// hooks below.
//
// Contract: every call is made from inside a kernel running on a simulated core
// (current_core() is that core). Values move at the call; the call advances the
// core's pipes by the time the operation takes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include <execinfo.h>

namespace pfsim {

enum class CoreKind { Aiv, Aic };

// Pipes, as the vendor profiler names them.
enum class Pipe { Scalar, Mte2, Mte3, Vector, Cube, All };

// On-core buffers a tile can live in.
enum class Buffer { Ub, L1, L0a, L0b, L0c };

// The cube's operand types, each with its own MAC rate.
enum class CubeOperand { Fp16, Int8, Fp32 };

// The element types an atomic-add store supports (a2a3: set_atomic_f32 ... s8).
enum class AtomicElement { F32, F16, Bf16, S32, S16, S8 };

// A kernel did something the hardware forbids; the run fails with this message.
// It keeps the return addresses at the throw, so that the run can name the
// line of the kernel's source that made the call (kernel_source_line).
class KernelError : public std::runtime_error {
public:
    explicit KernelError(const std::string& what) : std::runtime_error(what) {
        frames_.resize(32);
        frames_.resize(static_cast<size_t>(backtrace(frames_.data(), static_cast<int>(frames_.size()))));
    }
    const std::vector<void*>& frames() const { return frames_; }

private:
    std::vector<void*> frames_;
};

// Set by whoever loads kernels (loader/shared_object.cc): "file:line" of the
// innermost of `frames` in a kernel's own source, or "".
inline std::string (*kernel_source_line)(const std::vector<void*>& frames) = nullptr;
// The same for many stacks at once (one symbolizer run per kernel object).
inline std::vector<std::string> (*kernel_source_lines)(const std::vector<std::vector<void*>>& stacks) = nullptr;

class CoreOps {
public:
    virtual ~CoreOps() = default;

    virtual CoreKind core_kind() const = 0;
    virtual uint32_t block_idx() const = 0;   // cluster index
    virtual uint32_t block_num() const = 0;
    virtual uint32_t subblock_idx() const = 0;  // 0 or 1 for the two vector cores of a cluster
    // What the no-argument get_subblockid() reads: subblock_idx(), or 0 (core.subblock_register).
    virtual uint32_t subblock_register() const = 0;
    virtual uint32_t core_id() const = 0;       // unique over the die
    virtual int64_t* kernel_args() const = 0;   // what the running kernel was launched with

    // GM as kernels see it: a `__gm__` pointer is a host pointer into the die's
    // GM mapping. The GM address of [p, p + bytes), or kNotGm when it is not
    // all inside GM.
    static constexpr uint64_t kNotGm = ~uint64_t{0};
    virtual uint64_t gm_address(const volatile void* p, uint64_t bytes) const = 0;
    // The `__gm__` pointer of GM address `gm`.
    virtual uint64_t device_pointer(uint64_t gm) const = 0;
    // GM's uncached alias (a2a3: every GM page mapped a second time,
    // l2_cache_offset() bytes above the first; 0: no alias). The GM address of
    // [p, p + bytes) when it all lies in the alias, else kNotGm.
    virtual uint64_t l2_cache_offset() const = 0;
    virtual uint64_t gm_alias_address(const volatile void* p, uint64_t bytes) const = 0;
    // The scalar unit's GM accesses through its data cache (core.dcache) and
    // L2: what dereferencing a `__gm__` pointer does. A read waits for its data
    // (a hit for core.dcache_hit_latency); a write is posted.
    virtual void scalar_read(uint64_t gm, void* dst, uint64_t bytes) = 0;
    virtual void scalar_write(uint64_t gm, const void* src, uint64_t bytes) = 0;
    // dcci: clean and invalidate the data-cache line holding `line` (a kernel
    // pointer; may be null), or the whole data cache: the lines leave the
    // core's scalar data cache, dirty ones written back to the L2.
    virtual void dcci(const volatile void* line, bool entire) = 0;

    // Host memory standing for an on-core buffer; throws KernelError when
    // [offset, offset + bytes) does not fit it or the core has no such buffer.
    virtual uint8_t* buffer(Buffer b, uint64_t offset, uint64_t bytes) = 0;

    // GM -> local through L2 (MTE2) and local -> GM (MTE3).
    virtual void load(uint64_t gm, uint8_t* local, uint64_t bytes) = 0;
    // A load through GM's uncached alias: as load(), but it reads around the
    // L2 (model/common/read_around_l2.h): it allocates and evicts nothing.
    virtual void load_around_l2(uint64_t gm, uint8_t* local, uint64_t bytes) = 0;
    virtual void store(uint64_t gm, const uint8_t* local, uint64_t bytes) = 0;
    // A store whose bytes the L2 adds to GM's, element by element (TSTORE with
    // AtomicType::AtomicAdd): atomic against every other core's access; `gm`
    // and `bytes` are whole elements.
    virtual void store_add(uint64_t gm, const uint8_t* local, uint64_t bytes, AtomicElement element) = 0;
    // Occupies the vector unit for `bytes` of operands, or the cube for `macs` of `operand`s.
    virtual void vector(uint64_t bytes) = 0;
    // The same for exp, log, sqrt, rsqrt, reciprocal, division: core.vector_special_factor times as long.
    virtual void vector_special(uint64_t bytes) = 0;
    virtual void cube(uint64_t macs, CubeOperand operand) = 0;
    // What-if (pfsim run --free-prefetch, --warm-loads): [gm, gm + bytes) made
    // resident in L2 now, at no cost in time (model/common/what_if.h).
    virtual void make_resident(uint64_t gm, uint64_t bytes) = 0;
    // The vector mask register (CCE's set_mask_norm / set_mask_count /
    // set_vector_mask), normal mode and full at each kernel's start.
    // PTO-ISA's tile instructions expect the normal mode with the full mask
    // (some of their code paths set none of their own), so `vector`,
    // `vector_special` and UB -> UB moves throw KernelError while it is
    // anything else.
    virtual void set_vector_mask_mode(bool counter) = 0;
    virtual void set_vector_mask(uint64_t high, uint64_t low) = 0;
    // A move between on-core buffers (TMOV, TEXTRACT): L1 -> L0A/L0B/UB on
    // MTE1, L0C -> L1/UB on FIX, UB -> UB on the vector pipe, each at its rate.
    // Throws KernelError for a pair the core has no path for.
    virtual void move_local(Buffer from, Buffer to, uint64_t bytes) = 0;
    virtual void scalar(uint64_t ops) = 0;
    // Pipe synchronisation: wait_flag(src, dst) makes dst wait until src had
    // finished what it was doing at the matching set_flag.
    virtual void set_flag(Pipe src, Pipe dst, int event) = 0;
    virtual void wait_flag(Pipe src, Pipe dst, int event) = 0;
    virtual void barrier() = 0;
    // Cross-core flags (the FFTS block, cross_core_flags.h): set `config`'s
    // flag on the cores its mode names once `pipe` has finished what it was
    // doing; wait until `flag` has been set on this core, and consume one set.
    virtual void cross_core_set(Pipe pipe, uint64_t config) = 0;
    virtual void cross_core_wait(int flag) = 0;

    // Signals between ranks (pto::comm::TNOTIFY / TWAIT): `signal` is a kernel
    // pointer to an int32 in this die's GM or a peer's (a communication
    // window). notify sets it to `value` or adds `value` to it, atomically
    // against every other notify, through the scalar path (a peer's across the
    // link). wait polls it (comm.poll_interval apart) until `cmp` (WaitCmp's
    // order: EQ, NE, GT, GE, LT, LE) holds against `expected`; stopped while it
    // waits (the graph's time limit), it throws KernelError naming the signal,
    // its value and the last notify that wrote it. Both throw KernelError for a
    // signal in no rank's GM or outside what its rank allocated.
    virtual void signal_notify(const volatile int32_t* signal, int32_t value, bool add) = 0;
    virtual void signal_wait(const volatile int32_t* signal, int32_t expected, int cmp) = 0;
    // [p, p + bytes) as a GM address that lies inside what its rank (this die
    // or a peer) allocated; throws KernelError naming `instruction` and `what`
    // otherwise (a transfer beyond a communication window).
    virtual uint64_t allocated_gm(const char* instruction, const char* what, const volatile void* p, uint64_t bytes) const = 0;

    // The uncached path (control data: SDMA requests, flags, polls), MMIO, flush.
    virtual void uncached_write(uint64_t gm, const void* src, uint64_t bytes) = 0;
    virtual void uncached_read(uint64_t gm, void* dst, uint64_t bytes) = 0;
    virtual void mmio_write32(uint64_t addr, uint32_t value) = 0;
    // dcci of the whole data cache (core.flush_cost), or of the one line holding
    // `gm` (core.dcci_line_cost), each after the MTE3 writes before it and with a
    // data barrier; the lines leave the core's scalar data cache, as dcci().
    virtual void flush() = 0;
    virtual void flush_line(uint64_t gm) = 0;
    // Time spent building one SDMA request on the scalar unit.
    virtual void build_request() = 0;
    // Scalar work that takes `ps` (e.g. a fitted cost the model does not break down).
    virtual void spend(uint64_t ps) = 0;
    // Marks [since, now) as a prefetch post, and as a wait on one (flow 0: no post).
    virtual void note_prefetch_post(uint64_t since_ps, uint64_t flow, uint64_t addr, uint64_t bytes) = 0;
    virtual void note_prefetch_wait(uint64_t since_ps, uint64_t flow, bool done, uint64_t polls) = 0;
    virtual uint64_t now_ps() = 0;
    // A calibration instrument's timed pass (include/pfsim_timed_pass.h): its
    // start on this core, and its end with the bytes the core moved in it.
    virtual void timed_pass_begin() = 0;
    virtual void timed_pass_end(uint64_t bytes) = 0;
    virtual void warn(const std::string& message) = 0;
    // Checker side channel: reads GM as it is now, taking no time and counting nothing.
    virtual void peek(uint64_t gm, void* dst, uint64_t bytes) = 0;
    // A protocol checker found the kernel-side runtime breaking a rule.
    virtual void report_violation(const std::string& message) = 0;
};

// The core the calling kernel runs on. Throws std::logic_error outside a kernel.
CoreOps& current_core();

// Tile arithmetic on the host's second core. Calls work(context, thread, begin, end) for
// consecutive pieces [begin, end) that together cover [0, items) once each, some on the
// calling thread (thread 0) and some on the process's one helper thread (thread 1), and
// returns when every piece has returned. With no helper (PFSIM_TILE_THREADS=1, a one-core
// host: docs/configuration.md) it is one call, work(context, 0, 0, items). Which thread
// takes a piece and where [0, items) is cut vary from call to call, so a piece's results
// must depend on its items alone; pieces on the two threads run at once, so each writes
// only its items' memory and its thread's own scratch. `work` may touch only the memory
// `context` gives it: never SystemC, the model or this ABI (current_core() and the
// instrumented GM accesses belong to the calling thread), so it is built uninstrumented
// (PFSIM_TILE_COMPUTE), calls nothing instrumented, and does not throw. Not reentrant:
// `work` must not call on_two_threads.
void on_two_threads(void (*work)(void* context, int thread, int begin, int end), void* context, int items);

// A read of the system counter (get_sys_cnt) is one scalar op. Its full path,
// read_system_counter(), enters the core as every call does: it applies a
// pending raw store, honours a requested stop, advances the scalar unit and
// synchronises with SystemC time once the core is a quantum ahead. When that
// full path finds nothing to do but the advance, it arms this fast path for
// the running core (so does a pointer load's full path, whose data-cache hits
// then take Core::fast_load_hit under the same conditions): the next reads advance the scalar unit inline, as long as
// the advance stays within `horizon_ps` (SystemC time + core.quantum when
// armed, where the full path would not synchronise either). The core disarms
// it (g_counter_fast = nullptr) whenever anything else may have to happen at
// the next read: another core runs, a raw store waits to be applied, a stop is
// requested. So a polling loop costs a few host instructions per read and
// every read returns, and advances, exactly what the full path would.
struct CounterFastPath {
    uint64_t* issue_ps;        // the scalar unit's next issue time
    uint64_t* scalar_busy_ps;  // the scalar pipe's busy time (statistics)
    uint64_t op_ps;            // one scalar op (core.scalar_op)
    uint64_t horizon_ps;       // the latest issue time that needs no synchronisation
};
extern CounterFastPath* g_counter_fast;
// The system counter at the scalar unit's time after one more scalar op: 50 MHz
// ticks (20 ns) of simulated time. The full path; arms g_counter_fast.
uint64_t read_system_counter();
constexpr uint64_t kSystemCounterTickPs = 20000;
// Which copy of a [[block_local]] variable the running core uses (its core id;
// loader/compiler.h makes kBlockLocalCores copies).
constexpr unsigned kBlockLocalCores = 256;
unsigned int block_local_index();

}  // namespace pfsim

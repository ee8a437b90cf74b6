#include "model/core/core.h"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "base/hex.h"
#include "base/tile_threads.h"
#include "base/user_code.h"
#include "model/common/payload.h"
#include "model/common/peer_window.h"
#include "model/common/time.h"

namespace pfsim {

namespace {

Core* g_current = nullptr;

// Every change of the running core disarms the counter's fast path
// (CounterFastPath): only a full read arms it again.
void set_current(Core* core) {
    g_current = core;
    g_counter_fast = nullptr;
}

size_t index(Pipe p) { return static_cast<size_t>(p); }

const char* buffer_name(Buffer b) {
    switch (b) {
        case Buffer::Ub: return "UB";
        case Buffer::L1: return "L1";
        case Buffer::L0a: return "L0A";
        case Buffer::L0b: return "L0B";
        case Buffer::L0c: return "L0C";
    }
    return "?";
}

}  // namespace

CounterFastPath* g_counter_fast = nullptr;

uint64_t read_system_counter() {
    Core& core = static_cast<Core&>(current_core());
    return core.read_counter();
}

uint64_t Core::read_counter() {
    scalar(1);
    arm_fast_paths();
    return issue_ / kSystemCounterTickPs;
}

void Core::arm_fast_paths() {
    // Arm only when the next access would have nothing else to do: no stop to
    // honour (one may have been requested while the core synchronised).
    if (stop_.empty() && !raw_store_len_ && !user_code::time_limit_passed()) {
        counter_fast_ = {&issue_, &busy_time(stats_, Pipe::Scalar), scalar_op_,
                         sc_core::sc_time_stamp().value() + quantum_};
        g_counter_fast = &counter_fast_;
    }
}

bool Core::fast_load_hit(uint64_t gm, uint64_t len) {
    // Armed, the core is where the full path leaves it: no raw store to apply,
    // no stop, SystemC time as it was (horizon_ps is still that time plus
    // core.quantum). A hit within it needs no synchronisation, before the load
    // (hold_within_quantum) or after (maybe_sync).
    const Tick done = issue_ + dcache_hit_ + scalar_op_;
    if (g_counter_fast != &counter_fast_ || done > counter_fast_.horizon_ps || !observers_.empty() ||
        !dcache_ || in_peer_window(gm) || !dcache_->within_line(gm, len) ||
        (alloc_end_ && (gm < alloc_begin_ || gm + len > *alloc_end_)) || user_code::time_limit_passed() ||
        !dcache_->read(gm)) {
        return false;
    }
    ++stats_.dcache_hits;
    stats_.scalar_load_bytes += len;
    stats_.scalar += dcache_hit_ + scalar_op_;
    issue_ = done;
    return true;
}

uint64_t& busy_time(CoreStats& s, Pipe pipe) {
    switch (pipe) {
        case Pipe::Mte2: return s.mte2;
        case Pipe::Mte3: return s.mte3;
        case Pipe::Vector: return s.vector;
        case Pipe::Cube: return s.cube;
        case Pipe::Scalar:
        case Pipe::All: break;
    }
    return s.scalar;
}

Core* running_core() { return g_current; }

CoreOps& current_core() {
    if (!g_current) throw std::logic_error("pfsim: kernel API called outside a running kernel");
    g_current->apply_raw_store();
    g_current->check_stop();
    return *g_current;
}

void on_two_threads(void (*work)(void* context, int thread, int begin, int end), void* context, int items) {
    run_on_tile_threads(work, context, items);
}

unsigned int block_local_index() {
    const uint32_t id = current_core().core_id();
    if (id >= kBlockLocalCores) {
        throw KernelError("[[block_local]]: core " + std::to_string(id) + " has no copy (" +
                          std::to_string(kBlockLocalCores) + " are made)");
    }
    return id;
}

void Core::on_raw_access(bool write, uintptr_t addr, uint64_t len) {
    Core* core = g_current;
    if (!core) return;
    uint64_t gm = addr - reinterpret_cast<uintptr_t>(core->gm_host_);
    if (gm >= core->gm_size_ || len > core->gm_size_ - gm) {
        if (core->alias_offset_ && gm - core->alias_offset_ < core->gm_size_) {
            throw KernelError(std::string("a scalar ") + (write ? "store to" : "load from") + " GM address " +
                              hex(gm - core->alias_offset_) +
                              " through GM's uncached alias (gm.l2_cache_offset) is not modelled: TLOAD from the "
                              "alias reads around the L2");
        }
        if (!core->peer_gms_) return;  // the stack, tiles, the task payload
        gm = core->gm_address(reinterpret_cast<const volatile void*>(addr), len);  // a peer's window
        if (gm == kNotGm) return;
    }
    if (!write && core->fast_load_hit(gm, len)) return;
    // A GM access, out of line: the tests above, which most instrumented accesses
    // end at, stay a few instructions with no frame to set up.
    [](Core* core, bool write, uint64_t gm, uint64_t len) __attribute__((noinline)) {
        core->apply_raw_store();
        core->check_stop();
        if (core->alloc_end_ && !in_peer_window(gm) && (gm < core->alloc_begin_ || gm + len > *core->alloc_end_)) {
            throw KernelError(std::string(write ? "store to" : "load from") + " GM address " + hex(gm) + " (" +
                              std::to_string(len) + " bytes) outside every allocation");
        }
        if (write) {
            g_counter_fast = nullptr;  // the store is applied at the next full entry
            core->raw_store_gm_ = gm;
            core->raw_store_len_ = len;
            for (CoreObserver* o : core->observers_) o->scalar_stored(*core, gm, len);
            return;
        }
        for (CoreObserver* o : core->observers_) o->scalar_loaded(*core, gm, len);
        // The load reads what the cache holds (a dirty line, a prefetched one):
        // the L2 keeps its values in GM, in the very bytes the load is about to
        // read. A peer's window is read through the link, into those bytes.
        if (core->direct_reads_ && !in_peer_window(gm)) {
            core->scalar_read_in_place(gm, len);
        } else {
            core->scalar_read(gm, core->host_of(gm), len);
        }
        core->arm_fast_paths();
    }(core, write, gm, len);
}

void Core::check_stop() {
    if (!stop_.empty()) throw KernelError("stopped: " + stop_);
    if (user_code::time_limit_passed()) throw KernelError("kernel still running at " + user_code::time_limit_text());
}

void Core::apply_raw_store() {
    if (!raw_store_len_) return;
    const uint64_t gm = raw_store_gm_, len = raw_store_len_;
    raw_store_len_ = 0;
    scalar_write(gm, host_of(gm), len);
}

uint64_t Core::gm_address(const volatile void* p, uint64_t bytes) const {
    const uint64_t gm = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(gm_host_);
    if (gm_host_ && gm < gm_size_ && bytes <= gm_size_ - gm) return gm;
    if (!peer_gms_) return kNotGm;
    for (uint32_t rank = 0; rank < peer_gms_->size(); ++rank) {
        const PeerGm& peer = (*peer_gms_)[rank];
        const uint64_t offset = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(peer.host);
        if (peer.host != gm_host_ && offset < peer.size && bytes <= peer.size - offset) return peer_window(rank) + offset;
    }
    return kNotGm;
}

uint8_t* Core::host_of(uint64_t gm) const {
    if (!in_peer_window(gm)) return gm_host_ + gm;
    return (*peer_gms_)[peer_rank(gm)].host + peer_offset(gm);
}

uint64_t Core::allocated_gm(const char* instruction, const char* what, const volatile void* p, uint64_t bytes) const {
    const uint64_t gm = gm_address(p, bytes);
    auto fail = [&](const std::string& why) {
        throw KernelError(std::string(instruction) + ": the " + what + " (" + std::to_string(bytes) + " bytes at " +
                          hex(reinterpret_cast<uintptr_t>(p)) + ") " + why);
    };
    if (gm == kNotGm) fail("is in no rank's GM");
    uint64_t at = gm, begin = alloc_begin_;
    const uint64_t* end = alloc_end_;
    std::string rank = "this die";
    if (in_peer_window(gm)) {
        const PeerGm& peer = (*peer_gms_)[peer_rank(gm)];
        at = peer_offset(gm);
        begin = peer.alloc_begin;
        end = peer.alloc_end;
        rank = "rank " + std::to_string(peer_rank(gm));
        if (!peer.windows.empty()) {
            // The window the access starts in (the last one beginning at or below it), else the first.
            auto w = std::upper_bound(peer.windows.begin(), peer.windows.end(), std::make_pair(at, UINT64_MAX));
            if (w != peer.windows.begin()) --w;
            const auto [begin_w, bytes_w] = *w;
            if (at < begin_w || at - begin_w > bytes_w || bytes > bytes_w - (at - begin_w)) {
                fail("reaches past " + rank + "'s communication window (GM " + hex(at) + " + " +
                     std::to_string(bytes) + "; the window is GM " + hex(begin_w) + " + " + std::to_string(bytes_w) +
                     ", CommContext.winSize)");
            }
        }
    }
    if (end && (at < begin || at + bytes > *end)) {
        fail("reaches past what " + rank + " allocated (GM " + hex(at) + " + " + std::to_string(bytes) +
             "; its allocations end at " + hex(*end) + "): beyond its communication window");
    }
    return gm;
}

namespace {

// The last notify of each signal (by its host address, unique over every
// die): who made it, for a wait that is never satisfied.
std::map<uintptr_t, std::string>& signal_writers() {
    static std::map<uintptr_t, std::string> writers;
    return writers;
}

const char* const kWaitCmpNames[] = {"==", "!=", ">", ">=", "<", "<="};

bool compare(int32_t value, int32_t expected, int cmp) {
    switch (cmp) {
        case 0: return value == expected;
        case 1: return value != expected;
        case 2: return value > expected;
        case 3: return value >= expected;
        case 4: return value < expected;
        case 5: return value <= expected;
    }
    return false;
}

}  // namespace

void Core::forget_signal_writers() { signal_writers().clear(); }

void Core::signal_notify(const volatile int32_t* signal, int32_t value, bool add) {
    const uint64_t gm = allocated_gm("TNOTIFY", "signal", signal, 4);
    auto* host = reinterpret_cast<int32_t*>(host_of(gm));
    // Values move at the call, one SystemC process at a time: the update is atomic.
    *host = add ? static_cast<int32_t>(static_cast<uint32_t>(*host) + static_cast<uint32_t>(value)) : value;
    const int32_t now = *host;
    scalar_write(gm, &now, 4);
    const std::string line = calling_kernel_line();
    signal_writers()[reinterpret_cast<uintptr_t>(host)] =
        std::string(name()) + " (" + task_label_ + (line.empty() ? "" : ", " + line) + ") " +
        (add ? "added " : "set ") + std::to_string(value);
}

std::string Core::waiting_on() const {
    if (!signal_wait_.active) return "";
    const uint64_t gm = signal_wait_.gm;
    auto it = signal_writers().find(reinterpret_cast<uintptr_t>(host_of(gm)));
    return std::string("TWAIT on the signal at ") +
           (in_peer_window(gm) ? "rank " + std::to_string(peer_rank(gm)) + " GM " + hex(peer_offset(gm)) : "GM " + hex(gm)) +
           " for " + kWaitCmpNames[signal_wait_.cmp] + " " + std::to_string(signal_wait_.expected) + " (it holds " +
           std::to_string(signal_wait_.value) + "; " +
           (it == signal_writers().end() ? std::string("no TNOTIFY wrote it") : "its last writer: " + it->second) + ")";
}

void Core::signal_wait(const volatile int32_t* signal, int32_t expected, int cmp) {
    if (cmp < 0 || cmp > 5) throw KernelError("TWAIT: comparison " + std::to_string(cmp) + " is not a WaitCmp");
    const uint64_t gm = allocated_gm("TWAIT", "signal", signal, 4);
    const Tick since = issue_;
    signal_wait_ = SignalWait{true, gm, expected, cmp, 0, calling_kernel_line()};
    struct Done {
        SignalWait& w;
        ~Done() { w.active = false; }
    } done{signal_wait_};
    for (;;) {
        try {
            check_stop();
        } catch (const KernelError& e) {
            throw KernelError(waiting_on() + " never held: " + e.what());
        }
        uncached_read(gm, &signal_wait_.value, 4);
        if (compare(signal_wait_.value, expected, cmp)) break;
        if (issue_ - since >= wait_limit_) throw KernelError(waiting_on() + " never held: it waited orch.time_limit");
        spend(signal_poll_);
    }
    if (trace_) {
        trace_slice(index(Pipe::Scalar), "TWAIT", since, issue_,
                    "\"expected\":" + std::to_string(expected) + ",\"value\":" + std::to_string(signal_wait_.value));
    }
}

uint64_t Core::gm_alias_address(const volatile void* p, uint64_t bytes) const {
    if (!alias_offset_) return kNotGm;
    const uint64_t gm = reinterpret_cast<uintptr_t>(p) - reinterpret_cast<uintptr_t>(gm_host_) - alias_offset_;
    if (!gm_host_ || gm >= gm_size_ || bytes > gm_size_ - gm) return kNotGm;
    return gm;
}

template <typename ReadLine>
Tick Core::scalar_read_lines(uint64_t gm, uint64_t bytes, bool through_dcache, ReadLine read_line) {
    hold_within_quantum(issue_);
    Tick done = issue_;
    const uint64_t granule = through_dcache ? dcache_->line_bytes() : line_bytes_;
    for (uint64_t a = gm; a < gm + bytes;) {
        const uint64_t n = std::min(granule - a % granule, gm + bytes - a);
        if (!through_dcache) {
            done = std::max(done, read_line(a, n));
        } else if (dcache_->read(a)) {
            ++stats_.dcache_hits;
            done = std::max(done, issue_ + dcache_hit_);
        } else {
            ++stats_.dcache_misses;
            const uint64_t line = dcache_->line_of(a);
            done = std::max(done, read_line(line, granule));
            uint64_t victim = 0;
            if (dcache_->install(line, &victim)) write_back(victim);
        }
        a += n;
    }
    return done;
}

bool Core::through_dcache(uint64_t gm) const { return dcache_ && !in_peer_window(gm); }

void Core::write_back(uint64_t line) {
    ++stats_.dcache_writebacks;
    const uint64_t n = dcache_->line_bytes();
    std::vector<uint8_t> copy(host_of(line), host_of(line) + n);
    transport(cached, true, line, copy.data(), n, issue_);
}

void Core::scalar_read_done(Tick done, uint64_t bytes) {
    stats_.scalar_load_bytes += bytes;
    busy_time(stats_, Pipe::Scalar) += done - issue_;
    issue_ = done;
    scalar(1);
}

void Core::scalar_read(uint64_t gm, void* dst, uint64_t bytes) {
    const bool cached_here = through_dcache(gm);
    // Through the data cache, the line fills land in `value` and are not the
    // read's bytes: those are GM's (where the L2 keeps its values), read below.
    std::vector<uint8_t> value(cached_here ? dcache_->line_bytes() : bytes);
    const Tick done = scalar_read_lines(gm, bytes, cached_here, [&](uint64_t a, uint64_t n) {
        return transport(cached, false, a, cached_here ? value.data() : value.data() + (a - gm), n, issue_);
    });
    // No yield between the read and the copy: the value is the cache's at the read.
    std::memcpy(dst, cached_here ? host_of(gm) : value.data(), bytes);
    scalar_read_done(done, bytes);
}

void Core::scalar_read_in_place(uint64_t gm, uint64_t bytes) {
    const Tick done = scalar_read_lines(gm, bytes, through_dcache(gm), [&](uint64_t a, uint64_t n) {
        return direct_reads_->read_in_place(direct_initiator_, a, n, issue_);
    });
    scalar_read_done(done, bytes);
}

void Core::scalar_write(uint64_t gm, const void* src, uint64_t bytes) {
    hold_within_quantum(issue_);
    std::vector<uint8_t> copy(static_cast<const uint8_t*>(src), static_cast<const uint8_t*>(src) + bytes);
    const bool cached_here = through_dcache(gm);
    const uint64_t granule = cached_here ? dcache_->line_bytes() : line_bytes_;
    for (uint64_t a = gm; a < gm + bytes;) {
        const uint64_t n = std::min(granule - a % granule, gm + bytes - a);
        if (cached_here && dcache_->write(a)) {
            // A hit: the line turns dirty and reaches the L2 when written back.
            // Its value is GM's at once (values stay coherent).
            ++stats_.dcache_hits;
            std::memcpy(host_of(a), copy.data() + (a - gm), n);
        } else {
            transport(cached, true, a, copy.data() + (a - gm), n, issue_);
        }
        a += n;
    }
    stats_.scalar_store_bytes += bytes;
    scalar(1);
}

void Core::dcci(const volatile void* line, bool entire) {
    const uint64_t gm = line ? gm_address(line, 1) : kNotGm;
    if (!observers_.empty() && (entire || gm != kNotGm)) {
        for (CoreObserver* o : observers_) o->cache_flushed(*this, gm, entire);
    }
    if (entire) {
        flush();
    } else {
        if (gm != kNotGm) invalidate_line(gm);
        spend(dcci_line_);
    }
}

void Core::invalidate_line(uint64_t gm) {
    if (through_dcache(gm) && dcache_->invalidate(gm)) write_back(dcache_->line_of(gm));
}

Core::Core(sc_core::sc_module_name name, const Config& cfg, CoreKind kind, uint32_t id)
    : sc_module(name),
      cached("cached"),
      uncached("uncached"),
      mmio("mmio"),
      peers("peers"),
      kind_(kind),
      id_(id),
      subblock_register_zero_(cfg.choice("core.subblock_register") == "zero"),
      scalar_op_(cfg.time("core.scalar_op")),
      transfer_setup_(cfg.time("core.transfer_setup")),
      flush_cost_(cfg.time("core.flush_cost")),
      request_build_(cfg.time("core.request_build")),
      quantum_(cfg.time("core.quantum")),
      signal_poll_(cfg.time("comm.poll_interval")),
      wait_limit_(cfg.time("orch.time_limit")),
      load_bw_(cfg.bandwidth("core.load_bandwidth")),
      store_bw_(cfg.bandwidth("core.store_bandwidth")),
      vector_bw_(cfg.bandwidth("core.vector_bandwidth")),
      vector_special_factor_(static_cast<double>(cfg.count("core.vector_special_factor"))),
      cube_macs_per_cycle_(cfg.count("core.cube_macs")),
      cube_macs_int8_(cfg.count("core.cube_macs_int8")),
      cube_macs_fp32_(cfg.count("core.cube_macs_fp32")),
      line_bytes_(cfg.bytes("l2.line_bytes")),
      l1_l0a_bw_(cfg.bandwidth("core.l1_to_l0a_bandwidth")),
      l1_l0b_bw_(cfg.bandwidth("core.l1_to_l0b_bandwidth")),
      l1_ub_bw_(cfg.bandwidth("core.l1_to_ub_bandwidth")),
      l0c_bw_(cfg.bandwidth("core.l0c_out_bandwidth")),
      clock_hz_(cfg.frequency("chip.clock")),
      inflight_(),
      cross_latency_(cfg.time("core.cross_core_latency")),
      dcci_line_(cfg.time("core.dcci_line_cost")),
      alias_offset_(cfg.bytes("gm.l2_cache_offset")),
      dcache_hit_(cfg.time("core.dcache_hit_latency")) {
    if (cfg.flag("core.dcache")) {
        dcache_.emplace(cfg.bytes("core.dcache_bytes"), cfg.bytes("core.dcache_line_bytes"), cfg.count("core.dcache_ways"));
    }
    for (auto& window : inflight_) window.assign(cfg.count("core.outstanding_lines"), 0);
    align_ = {cfg.bytes("core.ub_align"), cfg.bytes("core.l1_align"), cfg.bytes("core.l0a_align"),
              cfg.bytes("core.l0b_align"), cfg.bytes("core.l0c_align")};
    if (kind_ == CoreKind::Aiv) {
        buffers_[static_cast<size_t>(Buffer::Ub)] = ZeroBuffer(cfg.bytes("core.ub_bytes"));
    } else {
        buffers_[static_cast<size_t>(Buffer::L1)] = ZeroBuffer(cfg.bytes("core.l1_bytes"));
        buffers_[static_cast<size_t>(Buffer::L0a)] = ZeroBuffer(cfg.bytes("core.l0a_bytes"));
        buffers_[static_cast<size_t>(Buffer::L0b)] = ZeroBuffer(cfg.bytes("core.l0b_bytes"));
        buffers_[static_cast<size_t>(Buffer::L0c)] = ZeroBuffer(cfg.bytes("core.l0c_bytes"));
    }
    SC_HAS_PROCESS(Core);
    SC_THREAD(thread);
}

void Core::start(KernelFn fn, int64_t* args, uint32_t block_idx, uint32_t block_num, uint32_t subblock,
                 Tick delay) {
    fn_ = fn;
    args_ = args;
    block_idx_ = block_idx;
    block_num_ = block_num;
    subblock_ = subblock;
    run_ = CoreRun{};
    stop_ = trap_ ? trap_() : std::string();
    flag_wait_ = -1;
    flag_blocked_ = false;
    // GUESS: a kernel starts with the normal mode and the full mask (what PTO-ISA
    // assumes; the runtime's reset of the register is not public).
    mask_counter_ = false;
    mask_high_ = mask_low_ = ~uint64_t{0};
    start_.notify(to_sc(delay));
}

void Core::thread() {
    for (;;) {
        sc_core::wait(start_);
        set_current(this);
        const Tick now = sc_core::sc_time_stamp().value();
        issue_ = now;
        pipe_.fill(now);
        streaming_.fill(now);
        for (auto& a : flags_) for (auto& b : a) b.fill(0);
        run_.ran = true;
        run_.entered = now;
        running_ = true;
        pending_posts_.clear();
        const std::string label = name() + std::string(" running ") + task_label_;
        const user_code::Escape escape = user_code::run(label.c_str(), [&] {
            try {
                fn_(args_);
            } catch (const KernelError& e) {
                const std::string line = kernel_source_line ? kernel_source_line(e.frames()) : "";
                run_.error = (line.empty() ? "" : line + ": ") + e.what();
            } catch (const std::exception& e) {
                run_.error = std::string("kernel raised: ") + e.what();
            } catch (...) {
                run_.error = "kernel threw " + user_code::current_exception_type();
            }
        });
        if (escape) {
            const std::string line = kernel_source_line ? kernel_source_line(escape.frames) : "";
            run_.error = (line.empty() ? "" : line + ": ") + "kernel " + escape.what();
            run_.fatal = true;
        }
        apply_raw_store();
        for (CoreObserver* o : observers_) o->kernel_returned(*this);
        barrier();
        catch_up(issue_);
        run_.returned = sc_core::sc_time_stamp().value();
        running_ = false;
        set_current(nullptr);
        notify_changed();
    }
}

void Core::notify_changed() {
    if (changed_bits_) changed_bits_[id_ / 64] |= uint64_t{1} << (id_ % 64);
    changed_.notify(sc_core::SC_ZERO_TIME);
}

void Core::catch_up(Tick until) {
    const Tick now = sc_core::sc_time_stamp().value();
    if (until > now) sc_core::wait(to_sc(until - now));
    set_current(this);
    issue_ = std::max<Tick>(issue_, sc_core::sc_time_stamp().value());
}

void Core::maybe_sync() {
    if (issue_ > sc_core::sc_time_stamp().value() + quantum_) catch_up(issue_);
}

Tick Core::drained() const { return std::max(issue_, *std::max_element(pipe_.begin(), pipe_.end())); }

uint8_t* Core::buffer(Buffer b, uint64_t offset, uint64_t bytes) {
    ZeroBuffer& buf = buffers_[static_cast<size_t>(b)];
    if (buf.empty()) {
        throw KernelError(std::string(kind_ == CoreKind::Aiv ? "a vector" : "a cube") + " core has no " +
                          buffer_name(b) + " buffer");
    }
    const uint64_t align = align_[static_cast<size_t>(b)];
    if (align > 1 && offset % align != 0) {
        throw KernelError(std::string("tile at ") + buffer_name(b) + " offset " + hex(offset) + " is not " +
                          std::to_string(align) + "-byte aligned");
    }
    if (offset > buf.size() || bytes > buf.size() - offset) {
        throw KernelError(std::string("tile at ") + buffer_name(b) + " offset " + hex(offset) + " + " +
                          std::to_string(bytes) + " bytes exceeds the " + std::to_string(buf.size() / 1024) +
                          " KiB " + buffer_name(b));
    }
    for (CoreObserver* o : observers_) o->tile_placed(*this, b, offset, bytes);
    return buf.data() + offset;
}

Tick Core::transport(tlm_utils::simple_initiator_socket<Core>& socket, bool write, uint64_t addr, void* data,
                     uint64_t len, Tick issue) {
    prepare_payload(payload_, write, addr, data, len);
    const Tick done = transport_at(&socket != &mmio && in_peer_window(addr) ? peers : socket, payload_, issue);
    if (payload_.is_response_error()) {
        throw KernelError(std::string(write ? "write to " : "read from ") + hex(addr) + " + " +
                          std::to_string(len) + " bytes: outside GM");
    }
    return done;
}

Tick Core::move(Pipe pipe, bool write, uint64_t gm, uint8_t* local, uint64_t bytes, Tick start) {
    std::vector<Tick>& window = inflight_[index(pipe)];
    size_t& next = inflight_next_[index(pipe)];
    // A plain access (no extension on the payload) of this die's GM takes the
    // L2's direct path, with the socket's effects.
    const bool direct = direct_moves_ && payload_extensions_ == 0;
    // The window of lines in flight carries over from the previous transfer:
    // back-to-back transfers overlap their lines as the engine frees slots.
    Tick last = start;
    size_t k = next;
    // The direct lines' bytes move once for each run of them, [run, a): the lines
    // are timed one by one and nothing else touches their bytes before the run
    // ends (no other process runs within this call; a line through a socket
    // ends the run first).
    uint64_t run = gm;
    const auto move_run = [&](uint64_t end) {
        if (end > run) direct_moves_->move_values(write, run, local + (run - gm), end - run);
    };
    for (uint64_t a = gm; a < gm + bytes;) {
        const uint64_t n = std::min(line_bytes_ - (a & (line_bytes_ - 1)), gm + bytes - a);  // a power of two
        Tick& slot = window[k];
        const Tick issue = std::max(slot, start);
        if (!direct || in_peer_window(a)) {
            if (direct) move_run(a);
            run = a + n;
            slot = transport(cached, write, a, local + (a - gm), n, issue);
        } else if (!direct_moves_->move_line(direct_initiator_, write, a, nullptr, n, issue, slot)) {
            move_run(a);
            throw KernelError(std::string(write ? "write to " : "read from ") + hex(a) + " + " + std::to_string(n) +
                              " bytes: outside GM");
        }
        last = std::max(last, slot);
        a += n;
        if (++k == window.size()) k = 0;
    }
    if (direct) move_run(gm + bytes);
    next = k;
    return last;
}

void Core::hold_within_quantum(Tick start) {
    // Values move when an operation is called; keep the call within a quantum of
    // the time the operation really starts, so that other processes (the SDMA
    // engine) see its effects in a consistent order. The scalar unit's own time
    // stays where it is: it issued the operation and went on, so how long the
    // simulation holds it here (a setting) changes no time it computes.
    // A transfer holds here for itself, so a TLOAD's rows each wait: a hold
    // for the instruction's first row only would call its later rows before
    // what other processes do in between (runtime_test's
    // EachRowOfATransferSeesWritesMadeUntilItsCall), and even a wait nothing
    // else falls within is not free to skip: SystemC orders the processes that
    // wake at one time by its timed queue's history (docs/performance.md).
    const Tick now = sc_core::sc_time_stamp().value();
    if (start > now + quantum_) {
        sc_core::wait(to_sc(start - quantum_ - now));
        set_current(this);
    }
}

void Core::occupy(Pipe pipe, Tick duration) {
    Tick& busy = pipe_[index(pipe)];
    hold_within_quantum(std::max(busy, issue_));
    const Tick begin = std::max(busy, issue_);
    busy = begin + duration;
    busy_time(stats_, pipe) += duration;
    if (trace_) trace_slice(index(pipe), pipe == Pipe::Cube ? "CUBE" : "VECTOR", begin, busy);
    scalar(1);
}

void Core::transfer(Pipe pipe, bool write, uint64_t gm, uint8_t* local, uint64_t bytes, double bandwidth) {
    // A move engine streams one transfer at a time (`streaming`), but the lines
    // of the previous transfer may still be arriving: `busy` is when all its
    // data is in, what flags and barriers wait for.
    Tick& busy = pipe_[index(pipe)];
    Tick& streaming = streaming_[index(pipe)];
    hold_within_quantum(std::max(streaming, issue_));
    const Tick begin = std::max(streaming, issue_);
    // The set-up of a transfer overlaps the previous one; it costs time only
    // when the engine was idle.
    const Tick start = std::max(streaming, issue_ + transfer_setup_);
    for (CoreObserver* o : observers_) o->transfer_started(*this, write, gm, bytes);
    const Tick moved = move(pipe, write, gm, local, bytes, start);
    if (bytes != pace_.bytes || bandwidth != pace_.bandwidth) pace_ = {bytes, bandwidth, transfer_time(bytes, bandwidth)};
    const Tick paced = start + pace_.time;
    const Tick end = std::max(moved, paced);
    const Tick stall = end > std::max(paced, busy) ? end - std::max(paced, busy) : 0;
    stats_.l2_stall += stall;
    for (CoreObserver* o : observers_) o->transfer_ended(*this, write, gm, bytes, stall);
    busy_time(stats_, pipe) += paced - begin;
    streaming = paced;
    busy = std::max(busy, end);
    if (trace_) {
        trace_slice(index(pipe), write ? "TSTORE" : "TLOAD", begin, paced,
                    "\"gm\":\"" + hex(gm) + "\",\"bytes\":" + std::to_string(bytes));
    }
    scalar(1);
}

std::string calling_kernel_line() {
    std::vector<void*> frames(32);
    frames.resize(static_cast<size_t>(backtrace(frames.data(), static_cast<int>(frames.size()))));
    return kernel_source_line ? kernel_source_line(frames) : "";
}

namespace {
// `e` on the payload for one call, cleared on the way out (an exception too);
// `count` counts the extensions on it meanwhile.
template <typename Extension>
class ScopedExtension {
public:
    ScopedExtension(tlm::tlm_generic_payload& p, Extension* e, int& count) : p_(p), e_(e), count_(count) {
        p_.set_extension(e_);
        ++count_;
    }
    ~ScopedExtension() {
        p_.clear_extension(e_);
        --count_;
    }
    ScopedExtension(const ScopedExtension&) = delete;
    ScopedExtension& operator=(const ScopedExtension&) = delete;

private:
    tlm::tlm_generic_payload& p_;
    Extension* e_;
    int& count_;
};
}  // namespace

void Core::make_resident(uint64_t gm, uint64_t bytes) {
    if (bytes == 0) return;
    const ScopedExtension<ResidentExtension> resident(payload_, &resident_, payload_extensions_);
    transport(cached, false, gm, nullptr, bytes, issue_);
}

void Core::load(uint64_t gm, uint8_t* local, uint64_t bytes) { load_from(gm, local, bytes, false); }

void Core::load_around_l2(uint64_t gm, uint8_t* local, uint64_t bytes) { load_from(gm, local, bytes, true); }

void Core::load_from(uint64_t gm, uint8_t* local, uint64_t bytes, bool around) {
    if (!warm_load_sites_.empty() || !around_load_sites_.empty()) {
        const std::string site = calling_kernel_line();
        if (std::find(warm_load_sites_.begin(), warm_load_sites_.end(), site) != warm_load_sites_.end()) {
            ++warmed_load_counts_[site];
            make_resident(gm, bytes);
        }
        if (std::find(around_load_sites_.begin(), around_load_sites_.end(), site) != around_load_sites_.end()) {
            ++around_load_counts_[site];
            around = true;
        }
    }
    stats_.load_bytes += bytes;
    if (!around) {
        transfer(Pipe::Mte2, false, gm, local, bytes, load_bw_);
        return;
    }
    const ScopedExtension<ReadAroundL2Extension> read_around(payload_, &read_around_, payload_extensions_);
    transfer(Pipe::Mte2, false, gm, local, bytes, load_bw_);
}

void Core::store(uint64_t gm, const uint8_t* local, uint64_t bytes) {
    stats_.store_bytes += bytes;
    transfer(Pipe::Mte3, true, gm, const_cast<uint8_t*>(local), bytes, store_bw_);
}

void Core::store_add(uint64_t gm, const uint8_t* local, uint64_t bytes, AtomicElement element) {
    const uint64_t size = atomic_element_bytes(element);
    if (gm % size || bytes % size) {
        throw KernelError("an atomic-add store at " + hex(gm) + " + " + std::to_string(bytes) + " bytes is not whole " +
                          std::to_string(size) + "-byte elements");
    }
    atomic_add_.element = element;
    const ScopedExtension<AtomicAddExtension> atomic(payload_, &atomic_add_, payload_extensions_);
    store(gm, local, bytes);
}

void Core::set_vector_mask_mode(bool counter) {
    mask_counter_ = counter;
    scalar(1);
}

void Core::set_vector_mask(uint64_t high, uint64_t low) {
    mask_high_ = high;
    mask_low_ = low;
    scalar(1);
}

void Core::check_vector_mask() const {
    if (!mask_counter_ && mask_high_ == ~uint64_t{0} && mask_low_ == ~uint64_t{0}) return;
    throw KernelError(std::string("a vector tile instruction ran with the vector mask ") +
                      (mask_counter_ ? "in counter mode (set_mask_count)"
                                     : "set to high " + hex(mask_high_) + ", low " + hex(mask_low_)) +
                      ": PTO-ISA's tile instructions expect set_mask_norm(); set_vector_mask(-1, -1), and on a2a3 "
                      "what they compute otherwise depends on each one's code path");
}

void Core::vector(uint64_t bytes) {
    check_vector_mask();
    occupy(Pipe::Vector, transfer_time(bytes, vector_bw_));
}

void Core::vector_special(uint64_t bytes) {
    check_vector_mask();
    occupy(Pipe::Vector, static_cast<Tick>(static_cast<double>(transfer_time(bytes, vector_bw_)) * vector_special_factor_ + 0.5));
}

void Core::cube(uint64_t macs, CubeOperand operand) {
    const uint64_t rate = operand == CubeOperand::Int8   ? cube_macs_int8_
                          : operand == CubeOperand::Fp32 ? cube_macs_fp32_
                                                         : cube_macs_per_cycle_;
    const uint64_t cycles = (macs + rate - 1) / rate;
    occupy(Pipe::Cube, static_cast<Tick>(static_cast<double>(cycles) * 1e12 / clock_hz_ + 0.5));
}

void Core::move_local(Buffer from, Buffer to, uint64_t bytes) {
    if (from == Buffer::L1 && (to == Buffer::L0a || to == Buffer::L0b || to == Buffer::Ub)) {
        occupy(Pipe::Mte2, transfer_time(bytes, to == Buffer::L0a ? l1_l0a_bw_ : to == Buffer::L0b ? l1_l0b_bw_ : l1_ub_bw_));
    } else if (from == Buffer::L0c && (to == Buffer::L1 || to == Buffer::Ub)) {
        occupy(Pipe::Mte3, transfer_time(bytes, l0c_bw_));
    } else if (from == Buffer::Ub && to == Buffer::Ub) {
        vector(2 * bytes);
    } else {
        throw KernelError(std::string("no move engine takes a tile from ") + buffer_name(from) + " to " +
                          buffer_name(to));
    }
}

void Core::scalar(uint64_t ops) {
    issue_ += ops * scalar_op_;
    busy_time(stats_, Pipe::Scalar) += ops * scalar_op_;
    maybe_sync();
}

void Core::set_flag(Pipe src, Pipe dst, int event) {
    if (src == Pipe::All || dst == Pipe::All || event < 0 || event >= 8) {
        throw KernelError("set_flag: bad pipe or event id " + std::to_string(event));
    }
    flags_[index(src)][index(dst)][event] = std::max(pipe_[index(src)], issue_);
    scalar(1);
}

void Core::wait_flag(Pipe src, Pipe dst, int event) {
    if (src == Pipe::All || dst == Pipe::All || event < 0 || event >= 8) {
        throw KernelError("wait_flag: bad pipe or event id " + std::to_string(event));
    }
    const Tick ready = flags_[index(src)][index(dst)][event];
    if (dst == Pipe::Scalar) {
        issue_ = std::max(issue_, ready);
    } else {  // nothing on dst starts before the flag
        pipe_[index(dst)] = std::max(pipe_[index(dst)], ready);
        streaming_[index(dst)] = std::max(streaming_[index(dst)], ready);
    }
    scalar(1);
}

void Core::barrier() {
    const Tick t = drained();
    pipe_.fill(t);
    streaming_.fill(t);
    issue_ = t;
    maybe_sync();
}

void Core::cross_core_set(Pipe pipe, uint64_t config) {
    if (!cross_flags_) throw KernelError("ffts_cross_core_sync: this die has no cross-core flags");
    const int mode = static_cast<int>((config >> 4) & 0x3), flag = static_cast<int>((config >> 8) & 0xf);
    const Tick done = pipe == Pipe::All ? drained() : std::max(pipe_[index(pipe)], issue_);
    cross_flags_->set(id_, mode, flag, done + cross_latency_);
    scalar(1);
}

void Core::cross_core_wait(int flag) {
    if (!cross_flags_) throw KernelError("wait_flag_dev: this die has no cross-core flags");
    if (flag < 0 || flag >= CrossCoreFlags::kFlags) {
        throw KernelError("wait_flag_dev: flag " + std::to_string(flag) + " is outside 0..15");
    }
    const Tick since = issue_;
    flag_wait_ = flag;
    struct Done {
        Core& core;
        ~Done() { core.flag_wait_ = -1; core.flag_blocked_ = false; }
    } done{*this};
    catch_up(issue_);  // every set made before this time has been made
    for (;;) {
        check_stop();
        const Tick now = sc_core::sc_time_stamp().value();
        const std::optional<Tick> arrival = cross_flags_->earliest(id_, flag);
        if (arrival && *arrival <= now) break;
        // A set made later may still arrive earlier than the one already known.
        if (arrival) {
            sc_core::wait(to_sc(*arrival - now), cross_flags_->arrived(id_) | stop_event_);
        } else {
            flag_blocked_ = true;
            notify_changed();
            sc_core::wait(cross_flags_->arrived(id_) | stop_event_);
            flag_blocked_ = false;
        }
        set_current(this);
    }
    cross_flags_->consume(id_, flag);
    issue_ = std::max<Tick>(issue_, sc_core::sc_time_stamp().value());
    stats_.cross_core_wait += issue_ - since;
    if (trace_) trace_slice(index(Pipe::Scalar), "wait_flag_dev", since, issue_, "\"flag\":" + std::to_string(flag));
    scalar(1);
}

std::string Core::in_flag_wait() const {
    if (flag_wait_ < 0) return "";
    const std::optional<Tick> arrival = cross_flags_->earliest(id_, flag_wait_);
    return "wait_flag_dev(" + std::to_string(flag_wait_) + ")" +
           (arrival ? ", a set arriving at " + std::to_string(*arrival / 1000) + " ns" : "");
}

std::string Core::blocked_on() const {
    // A set on its way since it blocked will wake it; else in_flag_wait() names the flag alone.
    if (!flag_blocked_ || cross_flags_->earliest(id_, flag_wait_)) return "";
    return in_flag_wait();
}

void Core::uncached_write(uint64_t gm, const void* src, uint64_t bytes) {
    const Tick start = std::max(pipe_[index(Pipe::Mte3)], issue_);
    issue_ = transport(uncached, true, gm, const_cast<void*>(src), bytes, start);
    pipe_[index(Pipe::Mte3)] = streaming_[index(Pipe::Mte3)] = issue_;
    maybe_sync();
}

void Core::uncached_read(uint64_t gm, void* dst, uint64_t bytes) {
    // A GM -> UB copy: set up like any transfer; it sees what others wrote by then.
    catch_up(std::max(pipe_[index(Pipe::Mte2)], issue_ + transfer_setup_));
    issue_ = transport(uncached, false, gm, dst, bytes, issue_);
    pipe_[index(Pipe::Mte2)] = streaming_[index(Pipe::Mte2)] = issue_;
}

void Core::mmio_write32(uint64_t addr, uint32_t value) {
    catch_up(issue_);  // a device register write is seen when it is issued, not before
    const Tick done = transport(mmio, true, addr, &value, 4, issue_);  // waits out a cold channel's publication
    scalar(1);
    issue_ = std::max(issue_, done);
    maybe_sync();
}

void Core::spend(uint64_t ps) {
    issue_ += ps;
    busy_time(stats_, Pipe::Scalar) += ps;
    maybe_sync();
}

void Core::flush() {
    if (dcache_) {
        for (uint64_t line : dcache_->invalidate_all()) write_back(line);
    }
    issue_ = std::max(issue_, pipe_[index(Pipe::Mte3)]) + flush_cost_;
    maybe_sync();
}

void Core::flush_line(uint64_t gm) {
    invalidate_line(gm);
    issue_ = std::max(issue_, pipe_[index(Pipe::Mte3)]) + dcci_line_;
    maybe_sync();
}

void Core::build_request() {
    issue_ += request_build_;
    busy_time(stats_, Pipe::Scalar) += request_build_;
}

void Core::trace_slice(int lane, const std::string& name, Tick start, Tick end, const std::string& args) {
    if (!trace_) return;
    if (!trace_pid_) {
        const bool aiv = kind_ == CoreKind::Aiv;
        trace_pid_ = trace_->process(std::string(aiv ? "AIV " : "AIC ") + std::to_string(id_) + " (cluster " +
                                         std::to_string(block_idx_) + (aiv ? ", sub " + std::to_string(subblock_) : "") + ")",
                                     static_cast<int>(id_) + 10);
        const char* names[] = {"SCALAR", "MTE2", "MTE3", "VECTOR", "CUBE", "PREFETCH_WAIT"};
        for (int i = 0; i < 6; ++i) trace_lane_[i] = trace_->lane(trace_pid_, names[i], i);
    }
    trace_->slice(trace_pid_, trace_lane_[lane], name, start, end, args);
}

void Core::note_prefetch_post(uint64_t since_ps, uint64_t flow, uint64_t addr, uint64_t bytes) {
    if (!trace_) return;
    std::string args = "\"gm\":\"" + hex(addr) + "\",\"bytes\":" + std::to_string(bytes);
    trace_slice(index(Pipe::Scalar), "TPREFETCH_ASYNC", since_ps, issue_, args);
    pending_posts_[flow] = PendingPost{since_ps, addr, bytes};
}

void Core::note_prefetch_wait(uint64_t since_ps, uint64_t flow, bool done, uint64_t polls) {
    if (issue_ > since_ps) stats_.prefetch_wait += issue_ - since_ps;
    if (polls) ++stats_.prefetch_waits;
    stats_.prefetch_polls += polls;
    if (!done) ++stats_.prefetch_wait_timeouts;
    if (!trace_) return;
    trace_slice(kWaitLane, flow ? "wait" : "wait for a flag slot", since_ps, issue_,
                std::string("\"done\":") + (done ? "true" : "false"));
    auto it = pending_posts_.find(flow);
    if (it == pending_posts_.end()) return;
    trace_->flow(flow, trace_pid_, trace_lane_[index(Pipe::Scalar)], it->second.start, trace_pid_,
                 trace_lane_[kWaitLane], since_ps);
    trace_->async_span(trace_pid_, "prefetch", "prefetch " + std::to_string(it->second.bytes) + " B", flow,
                       it->second.start, issue_, "\"gm\":\"" + hex(it->second.addr) + "\"");
    pending_posts_.erase(it);
}

void Core::peek(uint64_t gm, void* dst, uint64_t bytes) {
    tlm::tlm_generic_payload p;
    prepare_payload(p, false, gm, dst, bytes);
    if (uncached->transport_dbg(p) != bytes) throw KernelError("peek outside GM at " + hex(gm));
}

void Core::report_violation(const std::string& message) { run_.violations.push_back(message); }

void Core::warn(const std::string& message) {
    if (std::find(warnings_.begin(), warnings_.end(), message) == warnings_.end()) {
        warnings_.push_back(message);
    }
}

}  // namespace pfsim

// Run-time compiled kernels are built with GCC's ThreadSanitizer
// instrumentation (-fsanitize=thread, no function entry/exit hooks, see
// docs/cases.md) but without its runtime: every load and store calls one of
// these before it happens. The rest of the interface does nothing.
extern "C" {
#define PFSIM_RAW_ACCESS_HOOKS(n)                                                                     \
    void __tsan_read##n(void* a) { pfsim::Core::on_raw_access(false, reinterpret_cast<uintptr_t>(a), n); } \
    void __tsan_write##n(void* a) { pfsim::Core::on_raw_access(true, reinterpret_cast<uintptr_t>(a), n); } \
    void __tsan_unaligned_read##n(void* a) { pfsim::Core::on_raw_access(false, reinterpret_cast<uintptr_t>(a), n); } \
    void __tsan_unaligned_write##n(void* a) { pfsim::Core::on_raw_access(true, reinterpret_cast<uintptr_t>(a), n); }
PFSIM_RAW_ACCESS_HOOKS(1)
PFSIM_RAW_ACCESS_HOOKS(2)
PFSIM_RAW_ACCESS_HOOKS(4)
PFSIM_RAW_ACCESS_HOOKS(8)
PFSIM_RAW_ACCESS_HOOKS(16)
#undef PFSIM_RAW_ACCESS_HOOKS
void __tsan_read_range(void* a, unsigned long n) { pfsim::Core::on_raw_access(false, reinterpret_cast<uintptr_t>(a), n); }
void __tsan_write_range(void* a, unsigned long n) { pfsim::Core::on_raw_access(true, reinterpret_cast<uintptr_t>(a), n); }
void __tsan_vptr_read(void** a) { pfsim::Core::on_raw_access(false, reinterpret_cast<uintptr_t>(a), sizeof(void*)); }
void __tsan_vptr_update(void** a, void*) { pfsim::Core::on_raw_access(true, reinterpret_cast<uintptr_t>(a), sizeof(void*)); }
void __tsan_init() {}
void __tsan_func_entry(void*) {}
void __tsan_func_exit() {}
// A fence (std::atomic_thread_fence, what simulator branches define dcci and
// dsb as): the cores run one at a time and an access moves its value at the
// call, so there is nothing to order; it costs nothing, as those redefined
// calls do. Atomic loads, stores and read-modify-writes stay unprovided: a
// kernel using them does not load, the load naming the symbol.
void __tsan_atomic_thread_fence(int) {}
void __tsan_atomic_signal_fence(int) {}
}

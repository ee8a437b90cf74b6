#include "runtime/platform/sim/sim_platform.h"

#include <execinfo.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>

#include "base/hex.h"
#include "hw/sdma_registers.h"
#include "model/common/payload.h"
#include "pfsim_kernel_abi.h"
#include "model/sdma/sdma_engine.h"
#include "rtl_stubs/waves.h"
#include "runtime/platform/device.h"
#include "runtime/sdma_workspace.h"

namespace pfsim {

namespace {

constexpr uint64_t kGmBase = 1 << 20;  // GM address 0 stays invalid, as a null pointer
constexpr uint64_t kAlign = SimPlatform::kAllocAlign;

// rt::Device over the core the calling kernel runs on.
class SimDevice : public rt::Device {
public:
    bool is_vector_core() const override { return current_core().core_kind() == CoreKind::Aiv; }
    uint32_t block_idx() const override { return current_core().block_idx(); }
    uint32_t core_id() const override { return current_core().core_id(); }
    int64_t* kernel_args() const override { return current_core().kernel_args(); }
    uint64_t gm_address(const void* p) const override {
        const uint64_t gm = current_core().gm_address(p, 1);
        return gm == CoreOps::kNotGm ? 0 : gm;
    }
    void gm_write(uint64_t addr, const void* src, uint64_t bytes) override {
        current_core().uncached_write(addr, src, bytes);
    }
    void gm_read(uint64_t addr, void* dst, uint64_t bytes) override { current_core().uncached_read(addr, dst, bytes); }
    void mmio_write32(uint64_t addr, uint32_t value) override { current_core().mmio_write32(addr, value); }
    void flush() override { current_core().flush(); }
    void flush_line(uint64_t addr) override { current_core().flush_line(addr); }
    void build_request() override { current_core().build_request(); }
    void spend(uint64_t ps) override { current_core().spend(ps); }
    uint64_t now_ps() override { return current_core().now_ps(); }
    void note_prefetch_post(uint64_t since_ps, uint64_t flow, uint64_t addr, uint64_t bytes) override {
        current_core().note_prefetch_post(since_ps, flow, addr, bytes);
    }
    void note_prefetch_wait(uint64_t since_ps, uint64_t flow, bool done, uint64_t polls) override {
        current_core().note_prefetch_wait(since_ps, flow, done, polls);
    }
    void warn(const std::string& message) override { current_core().warn(message); }
    std::string caller_site() override { return calling_kernel_line(); }
    void make_resident(uint64_t addr, uint64_t bytes) override { current_core().make_resident(addr, bytes); }
    void peek(uint64_t addr, void* dst, uint64_t bytes) override { current_core().peek(addr, dst, bytes); }
    void report_violation(const std::string& message) override { current_core().report_violation(message); }
    // A core is a module of its die (SimPlatform's constructor makes them).
    rt::ChannelGroups& channel_groups() override {
        auto* die = dynamic_cast<SimPlatform*>(dynamic_cast<Core&>(current_core()).get_parent_object());
        if (!die) throw std::logic_error("a core outside any SimPlatform");
        return die->channel_groups();
    }
    // The running core's die, reached without current_core()'s entry work
    // (a pending raw store, a requested stop): the state is no call into the core.
    rt::KernelSide& kernel_side() override {
        Core* core = running_core();
        if (!core) throw std::logic_error("pfsim: kernel API called outside a running kernel");
        auto* die = dynamic_cast<SimPlatform*>(core->get_parent_object());
        if (!die) throw std::logic_error("a core outside any SimPlatform");
        return die->kernel_side();
    }
};

}  // namespace

}  // namespace pfsim

namespace pfsim::rt {
Device& current_device() {
    static SimDevice device;
    return device;
}
}  // namespace pfsim::rt

namespace pfsim {

namespace {

// The blocks' waves files for `path` (SimPlatform's constructor), written empty
// so that a file that cannot be written is refused before the simulation.
SocOptions waves_options(const Config& cfg, const std::string& path, std::vector<std::string>* files) {
    SocOptions options;
    if (path.empty()) return options;
    const bool l2 = cfg.choice("l2.tags") == "rtl";
    const bool sdma = cfg.choice("sdma.frontend") == "rtl";
    if (!l2 && !sdma) {
        throw std::invalid_argument("--waves needs an RTL block in the loop: --set sdma.frontend=rtl and/or --set l2.tags=rtl");
    }
    waves_format(path);  // refuses other extensions
    auto named = [&](const char* block) {
        if (!(l2 && sdma)) return path;
        const size_t dot = path.rfind('.');
        return path.substr(0, dot) + "." + block + path.substr(dot);
    };
    if (sdma) options.sdma_waves = named("sdma_frontend");
    if (l2) options.l2_waves = named("l2_tags");
    for (const std::string* f : {&options.sdma_waves, &options.l2_waves}) {
        if (f->empty()) continue;
        if (!std::ofstream(*f)) throw std::invalid_argument("cannot write waves file '" + *f + "'");
        files->push_back(*f);
    }
    return options;
}

}  // namespace

SimPlatform::SimPlatform(sc_core::sc_module_name name, const Config& cfg, const std::string& waves)
    : sc_module(name),
      host_memory("host_memory"),
      host_mmio("host_mmio"),
      cfg_(cfg),
      cross_flags_(static_cast<uint32_t>(cfg.count("chip.aic_cores")),
                   static_cast<uint32_t>(cfg.count("core.cross_core_flag_limit"))),
      soc_("soc", cfg, waves_options(cfg, waves, &waves_files_)),
      sampler_("sampler", soc_, cfg.time("trace.sample_interval")),
      next_free_(kGmBase),
      queue_live_(cfg.count("sdma.channels"), false),
      queue_ring_(cfg.count("sdma.channels"), 0) {
    host_memory.bind(soc_.l2.uncached);
    host_mmio.bind(soc_.sdma.mmio);
    const auto clusters = static_cast<uint32_t>(cfg.count("chip.aic_cores"));
    for (uint32_t b = 0; b < clusters; ++b) {
        aic_.push_back(std::make_unique<Core>(("aic" + std::to_string(b)).c_str(), cfg, CoreKind::Aic, b));
        for (uint32_t v = 0; v < 2; ++v) {
            const uint32_t id = clusters + 2 * b + v;
            aiv_.push_back(std::make_unique<Core>(("aiv" + std::to_string(2 * b + v)).c_str(), cfg,
                                                  CoreKind::Aiv, id));
        }
    }
    SC_HAS_PROCESS(SimPlatform);
    SC_THREAD(scheduler);
    changed_cores_.assign((aic_.size() + aiv_.size() + 63) / 64, 0);
    for (auto* group : {&aic_, &aiv_}) {
        for (auto& core : *group) {
            core->set_gm_window(soc_.gm.store().host_base(), soc_.gm.store().capacity());
            core->set_gm_allocated(kGmBase, &next_free_);
            core->set_cross_core_flags(&cross_flags_);
            core->mark_changes_in(changed_cores_.data());
            core->cached.bind(soc_.l2.cached);
            core->uncached.bind(soc_.l2.uncached);
            core->mmio.bind(soc_.sdma.mmio);
            core->peers.bind(soc_.link.in);
        }
    }
}

void SimPlatform::end_of_elaboration() {
    for (auto* group : {&aic_, &aiv_}) {
        for (auto& core : *group) {
            const int initiator = soc_.l2.cached.initiator_of(core->cached);
            if (initiator < 0) throw std::logic_error(std::string("pfsim: ") + core->name() + " is not bound to the L2");
            core->attach_direct_reads(&soc_.l2, initiator);
            core->attach_direct_moves(&soc_.l2, initiator);
        }
    }
}

void SimPlatform::attach_trace(TraceRecorder* trace) {
    for (auto* group : {&aic_, &aiv_}) {
        for (auto& core : *group) core->attach_trace(trace);
    }
    soc_.sdma.attach_trace(trace);
    sampler_.attach_trace(trace);
}

void SimPlatform::set_peer_gms(const std::vector<Core::PeerGm>* by_rank) {
    for (auto* group : {&aic_, &aiv_}) {
        for (auto& core : *group) core->set_peer_gms(by_rank);
    }
}

Core::PeerGm SimPlatform::gm_view() const {
    const BackingStore& store = soc_.gm.store();
    return Core::PeerGm{store.host_base(), store.capacity(), kGmBase, &next_free_, {}};
}

void SimPlatform::elaborate() {
    // Socket bindings resolve at the end of elaboration: finish it before the
    // host's first access.
    if (sc_core::sc_get_status() == sc_core::SC_ELABORATION) sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

void SimPlatform::host_transport(tlm_utils::simple_initiator_socket<SimPlatform>& socket, bool write,
                                 uint64_t addr, void* data, uint64_t len) {
    elaborate();
    // A payload's length is 32 bits: a longer copy goes in pieces.
    constexpr uint64_t kPiece = uint64_t{1} << 31;
    for (; len > kPiece; addr += kPiece, len -= kPiece) {
        host_transport(socket, write, addr, data, kPiece);
        data = static_cast<uint8_t*>(data) + kPiece;
    }
    prepare_payload(payload_, write, addr, data, len);
    bool refused = false;
    if (&socket == &host_memory) {
        // Host copies take no simulated time and occupy no GM channel: they
        // happen before a launch, not during it.
        refused = socket->transport_dbg(payload_) != len;
    } else {
        sc_core::sc_time delay = sc_core::SC_ZERO_TIME;
        socket->b_transport(payload_, delay);
        refused = payload_.is_response_error();
    }
    if (refused) {
        throw std::runtime_error("host access to " + hex(addr) + " + " + std::to_string(len) +
                                 " bytes refused (outside GM or MMIO)");
    }
}

uint64_t SimPlatform::gm_alloc(uint64_t bytes) {
    const uint64_t addr = next_free_;
    const uint64_t size = (std::max<uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    const uint64_t top = reserved_from_ ? reserved_from_ : cfg_.bytes("gm.size");
    if (size > top - addr) {
        throw std::runtime_error("GM is full: cannot allocate " + std::to_string(bytes) + " bytes");
    }
    next_free_ += size;
    return addr;
}

uint64_t SimPlatform::gm_reserve(uint64_t bytes) {
    const uint64_t top = reserved_from_ ? reserved_from_ : cfg_.bytes("gm.size") / kAlign * kAlign;
    const uint64_t size = (std::max<uint64_t>(bytes, 1) + kAlign - 1) / kAlign * kAlign;
    if (size > top - next_free_) {
        throw std::runtime_error("GM is full: cannot reserve " + std::to_string(bytes) + " bytes");
    }
    reserved_from_ = top - size;
    return reserved_from_;
}

bool SimPlatform::gm_allocated(uint64_t addr, uint64_t bytes) const {
    return addr >= kGmBase && addr <= next_free_ && bytes <= next_free_ - addr;
}

void SimPlatform::gm_free(uint64_t addr) {
    if (addr >= kGmBase && addr < next_free_) next_free_ = addr;
}

void SimPlatform::gm_zero(uint64_t addr, uint64_t bytes) {
    if (!soc_.gm.store().contains(addr, bytes)) {
        throw std::runtime_error("host access to " + hex(addr) + " + " + std::to_string(bytes) +
                                 " bytes refused (outside GM or MMIO)");
    }
    soc_.gm.store().zero(addr, bytes);  // as a host write: no simulated time, no GM channel
}

void SimPlatform::gm_release(uint64_t addr, uint64_t bytes) {
    soc_.gm.store().release(addr, (bytes + kAlign - 1) / kAlign * kAlign);
}

void SimPlatform::gm_write(uint64_t addr, const void* src, uint64_t bytes) {
    host_transport(host_memory, true, addr, const_cast<void*>(src), bytes);
}

void SimPlatform::gm_read(uint64_t addr, void* dst, uint64_t bytes) {
    host_transport(host_memory, false, addr, dst, bytes);
}

uint64_t SimPlatform::device_pointer(uint64_t addr) const {
    return reinterpret_cast<uintptr_t>(soc_.gm.store().host_base()) + addr;
}

uint32_t SimPlatform::dma_workspace_supported_mask() const {
    return cfg_.choice("sdma.provider") == "model" ? 1u << rt::DMA_WORKSPACE_SDMA : 0u;
}

uint64_t SimPlatform::l2_cache_offset() const { return cfg_.bytes("gm.l2_cache_offset"); }

uint32_t SimPlatform::dma_channel_count() const { return static_cast<uint32_t>(cfg_.count("sdma.channels")); }

uint32_t SimPlatform::doorbell_tail_offset() const {
    return static_cast<uint32_t>(cfg_.bytes("sdma.doorbell_tail_offset"));
}

rt::SdmaQueue SimPlatform::create_sdma_queue(uint32_t index) {
    if (index >= queue_live_.size() || queue_live_[index]) {
        throw std::runtime_error("SDMA queue " + std::to_string(index) + " cannot be created");
    }
    const auto depth = static_cast<uint32_t>(cfg_.count("sdma.queue_depth"));
    if (!queue_ring_[index]) queue_ring_[index] = gm_alloc(uint64_t{depth} * kSdmaRequestBytes);
    uint64_t base = queue_ring_[index];
    uint64_t d = depth;
    host_transport(host_mmio, true, soc_.sdma.register_address(index, SdmaRegister::kRingBase), &base, 8);
    host_transport(host_mmio, true, soc_.sdma.register_address(index, SdmaRegister::kRingDepth), &d, 4);
    queue_live_[index] = true;
    rt::SdmaQueue q;
    q.ring_base = base;
    q.doorbell_base = soc_.sdma.register_address(index, 0);
    q.depth = depth;
    q.sq_id = index;
    q.stream_id = index;
    return q;
}

void SimPlatform::destroy_sdma_queue(uint32_t index) {
    if (index < queue_live_.size()) queue_live_[index] = false;
}

uint32_t SimPlatform::live_sdma_queues() const {
    return static_cast<uint32_t>(std::count(queue_live_.begin(), queue_live_.end(), true));
}

rt::LaunchResult SimPlatform::launch(const rt::KernelEntries& entries, const rt::LaunchSpec& spec,
                                     const std::vector<int64_t*>& args_per_core) {
    const Launched launched = start_launch(entries, spec, args_per_core);
    sc_core::sc_start();
    return finish_launch(launched);
}

SimPlatform::Launched SimPlatform::start_launch(const rt::KernelEntries& entries, const rt::LaunchSpec& spec,
                                                const std::vector<int64_t*>& args_per_core) {
    const std::vector<rt::CorePlace> places = rt::core_places(spec);
    if (spec.block_dim == 0 || spec.block_dim > aic_.size() || spec.vector_per_block > 2 ||
        places.size() != args_per_core.size()) {
        throw std::runtime_error("launch of " + std::to_string(spec.block_dim) + " blocks does not fit the " +
                                 std::to_string(aic_.size()) + " clusters");
    }
    if ((spec.vector_per_block && !entries.aiv) || (spec.cube && !entries.aic)) {
        throw std::runtime_error(std::string("launch without a kernel for its ") +
                                 (spec.cube && !entries.aic ? "cube" : "vector") + " cores");
    }
    elaborate();
    if (faults_.prefetch_corrupt) soc_.l2.corrupt_next_prefetch_fill();
    Core::forget_signal_writers();
    std::vector<Core*> used;
    for (size_t i = 0; i < places.size(); ++i) {
        const rt::CorePlace& p = places[i];
        Core* core = p.vector ? aiv_[2 * p.block_idx + p.subblock].get() : aic_[p.block_idx].get();
        core->set_task_label("block " + std::to_string(p.block_idx) + (p.vector ? " subblock " + std::to_string(p.subblock) : ""));
        core->set_task_buffers({});  // raw arguments: which are tensors is not known
        core->start(p.vector ? entries.aiv : entries.aic, args_per_core[i], p.block_idx, spec.block_dim, p.subblock);
        used.push_back(core);
    }
    sampler_.start([used] {
        return std::any_of(used.begin(), used.end(), [](const Core* c) { return c->running(); });
    });
    return Launched{used, places};
}

rt::LaunchResult SimPlatform::finish_launch(const Launched& launched) {
    const std::vector<Core*>& used = launched.cores;
    const std::vector<rt::CorePlace>& places = launched.places;
    // Kernels left waiting for cross-core flags nobody set: stop and unwind them.
    bool blocked = false;
    for (Core* core : used) {
        if (core->running()) {
            core->request_stop("deadlock: " + core->blocked_on() + " waits for a cross-core flag no core will set");
            blocked = true;
        }
    }
    if (blocked) sc_core::sc_start();
    rt::LaunchResult result;
    uint64_t first = ~0ull, last = 0;
    for (size_t i = 0; i < used.size(); ++i) {
        const CoreRun& run = used[i]->last_run();
        rt::CoreTiming t;
        t.core_id = used[i]->core_id();
        t.vector = places[i].vector;
        t.block_idx = places[i].block_idx;
        t.subblock = places[i].subblock;
        t.entered_ps = run.entered;
        t.returned_ps = run.returned;
        t.error = run.ran ? run.error : "core never started";
        t.violations = run.violations;
        if (!t.error.empty()) {
            t.error = std::string(used[i]->name()) + ": " + t.error;
        }
        first = std::min<uint64_t>(first, run.entered);
        last = std::max<uint64_t>(last, run.returned);
        result.cores.push_back(t);
        for (const std::string& w : used[i]->take_warnings()) {
            if (std::find(result.warnings.begin(), result.warnings.end(), w) == result.warnings.end()) {
                result.warnings.push_back(w);
            }
        }
    }
    for (const std::string& w : cross_flags_.drain()) result.warnings.push_back(w);
    result.kernel_time_ps = last > first ? last - first : 0;
    return result;
}

rt::CorePlace SimPlatform::core_place(uint32_t id) const {
    const auto clusters = static_cast<uint32_t>(aic_.size());
    if (id < clusters) return rt::CorePlace{false, id, 0};
    return rt::CorePlace{true, (id - clusters) / 2, (id - clusters) % 2};
}

const Core& SimPlatform::core(uint32_t id) const {
    const rt::CorePlace p = core_place(id);
    return p.vector ? *aiv_[2 * p.block_idx + p.subblock] : *aic_[p.block_idx];
}

uint64_t SimPlatform::now_ps() const { return sc_core::sc_time_stamp().value(); }

}  // namespace pfsim

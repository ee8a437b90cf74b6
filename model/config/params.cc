#include "model/config/params.h"

#include <map>

namespace pfsim {

namespace {

ParamSpec param(const char* key, Kind kind, const char* description) {
    ParamSpec p;
    p.key = key;
    p.kind = kind;
    p.description = description;
    return p;
}

ParamSpec power_of_two(ParamSpec p) {
    p.power_of_two = true;
    return p;
}

ParamSpec zero_allowed(ParamSpec p) {
    p.may_be_zero = true;
    return p;
}

ParamSpec choice(const char* key, const char* description, std::vector<std::string> choices) {
    ParamSpec p = param(key, Kind::Choice, description);
    p.choices = std::move(choices);
    return p;
}

}  // namespace

const std::vector<ParamSpec>& param_specs() {
    static const std::vector<ParamSpec> specs = {
        param("chip.clock", Kind::Frequency, "core clock; converts 'cycles' and 'B/cycle' values"),
        param("chip.aiv_cores", Kind::Count, "vector (AIV) cores per die"),
        param("chip.aic_cores", Kind::Count, "cube (AIC) cores per die"),

        power_of_two(param("gm.size", Kind::Size, "global memory (HBM) capacity per die")),
        param("gm.channels", Kind::Count, "independent GM channels, address-interleaved"),
        choice("gm.host_pages", "SIMULATION: host pages behind simulated GM: auto = 2 MiB huge pages (where the host's transparent huge pages allow) for the whole 2 MiB regions of each copy of 2 MiB or more (tensors written in), the host's base pages elsewhere, so host memory follows the bytes written; huge = huge pages everywhere (a fault per 2 MiB, but a region written even sparsely takes all its 2 MiB); small = base pages everywhere", {"auto", "huge", "small"}),
        power_of_two(param("gm.interleave", Kind::Size,
                           "bytes mapped to one channel before the next channel")),
        choice("gm.channel_map", "piece to channel: modulo = piece mod channels; xor = piece xor its upper bits, mod channels",
               {"modulo", "xor"}),
        zero_allowed(param("gm.l2_cache_offset", Kind::Size,
                           "where GM's uncached alias starts, above GM (the driver's rtGetL2CacheOffset; kernels read it with get_l2_cache_offset(args)): a load through the alias neither allocates nor evicts in L2, as TLOAD<TLoadL2Hint::NotAlloc*> makes it; 0: no alias, such loads are ordinary cached ones")),
        param("gm.bandwidth", Kind::Bandwidth, "aggregate GM bandwidth, split evenly over channels"),
        param("gm.read_latency", Kind::Time, "GM read access latency, once per request"),
        param("gm.write_latency", Kind::Time, "GM write access latency, once per request"),
        zero_allowed(param("gm.request_overhead", Kind::Time,
                           "channel time per access of up to gm.interleave bytes")),

        param("l2.size", Kind::Size, "L2 capacity shared by all cores of the die"),
        power_of_two(param("l2.line_bytes", Kind::Size, "L2 line: allocation and access unit")),
        param("l2.ways", Kind::Count, "associativity"),
        power_of_two(param("l2.slices", Kind::Count, "L2 slices, each with its own bandwidth")),
        choice("l2.index", "set index: modulo = line mod sets; xor = line xor its upper bits, mod sets",
               {"modulo", "xor"}),
        choice("l2.tags", "SIMULATION: who answers tag lookups: tlm = the C++ model; rtl = the verilated RTL tag pipeline (rtl_stubs/l2_tags)",
               {"tlm", "rtl"}),
        choice("l2.replacement", "which valid line of a full set a fill replaces: lru = the least recently used; lru_prefetch_lru = LRU, but a prefetch fill enters as the least recent (replaced first unless a core touches it); srrip = 2-bit SRRIP, hit priority, demand fills at long and prefetch fills at distant re-reference (model/l2/replacement_*.cc)",
               {"lru", "lru_prefetch_lru", "srrip"}),
        choice("l2.demand", "WHAT-IF: how core accesses are served: timed = as modelled; ideal = every one as a hit, its data fetched at no cost (the advisor's upper bound of any prefetch)",
               {"timed", "ideal"}),
        param("l2.hit_latency", Kind::Time, "latency of an access that hits"),
        zero_allowed(param("l2.miss_latency", Kind::Time,
                           "extra latency of a miss, on top of the hit latency and the GM read")),
        zero_allowed(param("l2.same_line_interval", Kind::Time,
                           "a line serves hits from initiators other than its holder one per interval of simulated time (0: no limit)")),
        param("l2.slice_read_bandwidth", Kind::Bandwidth, "read bandwidth of one slice"),
        param("l2.slice_write_bandwidth", Kind::Bandwidth, "write bandwidth of one slice"),
        param("l2.max_outstanding_misses", Kind::Count, "misses in flight at once (MSHRs); at most 65535"),

        choice("sdma.provider", "SDMA workspace provider: model = simulated engine; none = no SDMA",
               {"model", "none"}),
        choice("sdma.frontend", "SIMULATION: doorbells, arbitration, request fetch and decode: tlm = the C++ model; rtl = the verilated RTL front-end (rtl_stubs/sdma_frontend)",
               {"tlm", "rtl"}),
        param("sdma.channels", Kind::Count, "SDMA channels, one submission ring each"),
        param("sdma.queue_depth", Kind::Count, "entries in one channel's submission ring"),
        zero_allowed(param("sdma.mmio_base", Kind::Size, "MMIO address of channel 0's registers")),
        power_of_two(param("sdma.doorbell_stride", Kind::Size,
                           "MMIO distance between two channels' register blocks")),
        zero_allowed(param("sdma.doorbell_tail_offset", Kind::Size,
                           "tail doorbell offset in a channel's register block")),
        zero_allowed(param("sdma.doorbell_latency", Kind::Time,
                           "the engine's publication of one doorbell: from the write to the engine seeing the new tail")),
        choice("sdma.doorbell_write",
               "published = one publication at a time engine-wide, the doorbell write completes when its own ends; "
               "posted = a warm channel's doorbell write completes at once and the publications overlap (a cold "
               "channel's is published, and waited for, either way)",
               {"published", "posted"}),
        param("sdma.request_startup", Kind::Time,
              "engine start-up per request, not hidden between requests of one channel"),
        param("sdma.channel_bandwidth", Kind::Bandwidth, "data rate of one channel"),
        param("sdma.bandwidth", Kind::Bandwidth, "aggregate data rate of all channels"),
        zero_allowed(param("sdma.cold_channel_cost", Kind::Time,
                           "first doorbell of a cold channel, serialised in the engine")),
        choice("sdma.channel_setup",
               "SIMULATION: done = every channel's one-time set-up happened in earlier rounds of the process (the "
               "steady state a benchmark measures after its warm-up rounds); pending = a fresh process: a channel's "
               "first doorbell that submits requests pays sdma.channel_setup_cost",
               {"done", "pending"}),
        zero_allowed(param("sdma.channel_setup_cost", Kind::Time,
                           "one-time set-up of a channel at its first submission in a process (the channel warm-up "
                           "does not pay it: it submits nothing), serialised in the engine's publication")),
        param("sdma.resident_check_bandwidth", Kind::Bandwidth,
              "rate at which a prefetch request's lines already resident in L2 pass the engine's residency check "
              "(they move no data; the rest move at sdma.bandwidth)"),
        param("sdma.max_request_bytes", Kind::Size, "largest length one request may carry"),
        power_of_two(param("sdma.chunk_bytes", Kind::Size,
                           "the engine moves data in pieces of this size, and arbitrates between channels per piece")),
        zero_allowed(param("sdma.channel_switch_cost", Kind::Time,
                           "engine time to change from one channel's request to another's between two pieces")),
        param("comm.poll_interval", Kind::Time, "a TWAIT's pause between two reads of its signal"),
        param("link.bandwidth", Kind::Bandwidth,
              "data rate from one die to one peer die (each direction): a die's cores and SDMA engine share it"),
        zero_allowed(param("link.latency", Kind::Time,
                           "one way across the die-to-die link: a peer GM access pays it going and again answered")),

        param("core.ub_bytes", Kind::Size, "unified buffer of one vector core"),
        param("core.l1_bytes", Kind::Size, "L1 buffer of one cube core"),
        param("core.l0a_bytes", Kind::Size, "L0A (left operand) buffer of one cube core"),
        param("core.l0b_bytes", Kind::Size, "L0B (right operand) buffer of one cube core"),
        param("core.l0c_bytes", Kind::Size, "L0C (accumulator) buffer of one cube core"),
        param("core.ub_align", Kind::Size, "alignment of a tile's offset in UB (TASSIGN)"),
        param("core.l1_align", Kind::Size, "alignment of a tile's offset in L1"),
        param("core.l0a_align", Kind::Size, "alignment of a tile's offset in L0A"),
        param("core.l0b_align", Kind::Size, "alignment of a tile's offset in L0B"),
        param("core.l0c_align", Kind::Size, "alignment of a tile's offset in L0C"),
        param("core.scalar_op", Kind::Time, "issue cost of one kernel API call on the scalar unit"),
        param("core.transfer_setup", Kind::Time, "start-up of one GM load or store instruction"),
        param("core.load_bandwidth", Kind::Bandwidth, "per-core L2 read rate of GM->local loads (MTE2)"),
        param("core.store_bandwidth", Kind::Bandwidth, "per-core L2 write rate of local->GM stores (MTE3)"),
        param("core.outstanding_lines", Kind::Count, "L2 line requests one move engine keeps in flight"),
        param("core.vector_bandwidth", Kind::Bandwidth, "bytes of operands the vector unit processes"),
        param("core.vector_special_factor", Kind::Count,
              "how many times longer exp, log, sqrt, rsqrt, reciprocal and division take than an add"),
        param("core.cube_macs", Kind::Count, "multiply-accumulates per cycle of the cube unit (fp16, bf16 operands)"),
        param("core.cube_macs_int8", Kind::Count, "cube multiply-accumulates per cycle on int8 operands"),
        param("core.cube_macs_fp32", Kind::Count, "cube multiply-accumulates per cycle on float operands"),
        param("core.l1_to_l0a_bandwidth", Kind::Bandwidth, "MTE1 rate from L1 to L0A (TMOV, TEXTRACT)"),
        param("core.l1_to_l0b_bandwidth", Kind::Bandwidth, "MTE1 rate from L1 to L0B"),
        param("core.l1_to_ub_bandwidth", Kind::Bandwidth, "rate from L1 to UB"),
        param("core.l0c_out_bandwidth", Kind::Bandwidth, "FIX pipe rate out of L0C to L1 or UB"),
        param("core.flush_cost", Kind::Time, "cache clean/invalidate of a few lines plus a barrier"),
        param("core.request_build", Kind::Time, "scalar time to build one 64-byte SDMA request"),
        param("core.dcci_line_cost", Kind::Time, "dcci of one data-cache line (SINGLE_CACHE_LINE) from a kernel"),
        param("core.dcache", Kind::Flag,
              "the scalar unit's data cache (DCache) between its GM loads and stores and the L2: true = modelled "
              "(docs/configuration.md); false = every scalar access of GM is an L2 access"),
        power_of_two(param("core.dcache_bytes", Kind::Size, "capacity of one core's scalar data cache")),
        power_of_two(param("core.dcache_line_bytes", Kind::Size,
                           "scalar data-cache line: what a miss fetches from the L2 and dcci cleans")),
        param("core.dcache_ways", Kind::Count, "scalar data-cache associativity (lines per set)"),
        choice("core.dcache_replacement", "which line of a full scalar data-cache set a fill replaces: lru = the least recently used", {"lru"}),
        param("core.dcache_hit_latency", Kind::Time,
              "a scalar load's wait for a line the data cache holds (the scalar op's issue cost on top)"),
        zero_allowed(param("core.cross_core_latency", Kind::Time,
                           "a cross-core flag set (ffts_cross_core_sync) to its arrival on the other core")),
        param("core.cross_core_flag_limit", Kind::Count,
              "sets one cross-core flag counter holds before a further set fails the kernel"),
        param("core.quantum", Kind::Time, "SIMULATION: how far a core may run ahead of SystemC time"),
        choice("core.subblock_register",
               "what the no-argument CCE get_subblockid() reads (TPUSH/TPOP's lane too): lane = the core's place in "
               "its cluster, as simpler's a2a3sim gives it; zero = 0 on every core, as the board reads it under "
               "simpler's runtime, which does not program the register (simpler's intrinsic.h, issue #900)",
               {"lane", "zero"}),

        param("trace.max_bytes", Kind::Size, "SIMULATION: a --trace file stops growing here (and says so)"),
        param("trace.sample_interval", Kind::Time, "SIMULATION: period of the trace's counter samples"),

        choice("prefetch.protocol",
               "the PTO-ISA prefetch runtime's generation: 2026-08 = PTO-ISA 7ddaa823 on (what simpler pins): "
               "the channel warm-up pass at worker init; 2026-07 = PTO-ISA f134f486 to 7ddaa823: no warm-up, the "
               "first post on each channel pays its publication",
               {"2026-08", "2026-07"}),
        param("prefetch.request_bytes", Kind::Size,
              "bytes per data request (SQE) of one prefetch: 64 MiB from PTO-ISA 7ddaa823, 1 MiB before"),
        param("prefetch.workspace_bytes", Kind::Size, "SDMA workspace size (version drift: >= 16 KiB)"),
        param("prefetch.poll_limit", Kind::Count, "polls of one post-done record before wait gives up"),
        param("prefetch.max_posts", Kind::Count, "un-retired posts per session (flag-payload slots)"),
        param("prefetch.warmup_blocks", Kind::Count, "vector cores the channel warm-up kernel runs on"),
        zero_allowed(param("prefetch.warmup_channel_cost", Kind::Time,
                           "core time per channel of the warm-up pass, beyond its accesses and doorbell")),

        zero_allowed(param("orch.submit_cost", Kind::Time, "AICPU orchestrator time per task submission")),
        zero_allowed(param("orch.dispatch_latency", Kind::Time, "a ready task's block to its core starting it")),
        zero_allowed(param("orch.doorbell_latency", Kind::Time,
                           "an early-staged block's producer completing to its gated core starting it "
                           "(set_allow_early_resolve)")),
        zero_allowed(param("orch.completion_latency", Kind::Time,
                           "a core finishing a block to the scheduler counting it done")),
        param("orch.tensor_data_cost", Kind::Time,
              "AICPU orchestrator time per get_tensor_data / set_tensor_data element or cache maintenance call"),
        param("orch.poll_interval", Kind::Time, "period of the scheduler's polls of deferred-completion conditions"),
        param("orch.time_limit", Kind::Time, "SIMULATION: a task graph still running after this stops, its stuck tasks named"),
        zero_allowed(param("orch.host_time_limit", Kind::Time,
                           "SIMULATION: host (wall-clock) time a run's users' code (golden, orchestration, kernels) "
                           "may take; past it the running kernel is stopped and named (exit 1); 0: none; "
                           "`--timeout SECONDS` sets it")),
        param("orch.heap_bytes", Kind::Size, "the runtime's heap ring for outputs it allocates (TensorCreateInfo)"),

        param("teardown.op_timeout", Kind::Time, "the op-execute timeout the run streams use; sets the fatal hand-off wait"),
        param("teardown.handoff_floor", Kind::Time,
              "the least hand-off wait before the force reset of a worker with SDMA after a fatal error"),
        zero_allowed(param("teardown.settle_margin", Kind::Time,
                           "added to teardown.op_timeout: the hand-off wait is max(floor, op timeout + margin)")),
        zero_allowed(param("teardown.reset_time", Kind::Time, "one force reset of the device with its confirming probe")),
        param("teardown.reset_attempts_sdma", Kind::Count, "force resets tried after a fatal error on a worker with SDMA"),
        param("teardown.reset_attempts", Kind::Count, "force resets tried after a fatal error on a worker without SDMA"),
    };
    return specs;
}

const ParamSpec* find_param(const std::string& key) {
    static const std::map<std::string, const ParamSpec*> index = [] {
        std::map<std::string, const ParamSpec*> m;
        for (const ParamSpec& p : param_specs()) m[p.key] = &p;
        return m;
    }();
    auto it = index.find(key);
    return it == index.end() ? nullptr : it->second;
}

}  // namespace pfsim

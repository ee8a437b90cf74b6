#include "model/l2/tag_store.h"

#include <stdexcept>

#include "model/l2/lanes16.h"
#include "rtl_stubs/waves.h"

namespace pfsim {

TlmTags::TlmTags(const TagGeometry& g, const std::string& replacement)
    : ways_(g.ways), stride_(lanes16::stride(g.ways)), lanes_(lanes16::way_bits(g.ways)), tag_(g.sets * stride_),
      dirty_(g.sets * g.ways), policy_(make_replacement(replacement, g.sets, g.ways)) {
    if (g.lines > kMaxTaggedLines) {
        throw std::invalid_argument("the L2's tags hold at most " + std::to_string(kMaxTaggedLines) + " lines of GM");
    }
}

void TlmTags::warm_host_cache(uint64_t set) const {
    __builtin_prefetch(&tag_[set * stride_], 1);
    __builtin_prefetch(&dirty_[set * ways_], 1);
    policy_->warm_host_cache(set);
}

int64_t TlmTags::find(uint64_t set, uint32_t tag) const {
    const uint32_t* t = &tag_[set * stride_];
    if (lanes_ != 0) {
        const uint32_t m = lanes16::equal(t, tag) & lanes_;
        return m != 0 ? __builtin_ctz(m) : -1;
    }
    for (uint64_t w = 0; w < ways_; ++w) {
        if (t[w] == tag) return static_cast<int64_t>(w);
    }
    return -1;
}

TagResult TlmTags::lookup(uint64_t set, uint64_t line, Tick) {
    TagResult r;
    const int64_t way = find(set, static_cast<uint32_t>(line + 1));
    if (way >= 0) {
        r.hit = true;
        r.way = static_cast<unsigned>(way);
        r.dirty = dirty_[set * ways_ + r.way];
    }
    return r;
}

TagResult TlmTags::access(uint64_t set, uint64_t line, bool write, Tick when, Fill by) {
    TagResult r = lookup(set, line, when);
    if (r.hit) {
        policy_->touch(set, r.way, by);
    } else {
        const int64_t invalid = find(set, 0);  // an invalid way first
        r.way = invalid >= 0 ? static_cast<unsigned>(invalid) : policy_->victim(set);
        uint32_t& tag = tag_[set * stride_ + r.way];
        const uint64_t victim = set * ways_ + r.way;
        if (tag != 0) {
            r.victim_valid = true;
            r.victim_line = tag - 1;
            r.victim_dirty = dirty_[victim];
        }
        tag = static_cast<uint32_t>(line + 1);
        dirty_[victim] = 0;
        policy_->insert(set, r.way, by);
    }
    const uint64_t slot = set * ways_ + r.way;
    if (write) dirty_[slot] = 1;
    r.dirty = dirty_[slot];
    return r;
}

TagGeometry tag_geometry(const Config& cfg) {
    TagGeometry g;
    const uint64_t line = cfg.bytes("l2.line_bytes");
    g.ways = cfg.count("l2.ways");
    g.sets = cfg.bytes("l2.size") / line / g.ways;
    g.slices = cfg.count("l2.slices");
    g.lines = (cfg.bytes("gm.size") + line - 1) / line;
    return g;
}

namespace {

// The product's builds (rtl_stubs/l2_tags/BUILD), then those tests register.
std::vector<RtlTagBuild>& rtl_tag_builds() {
    static std::vector<RtlTagBuild> builds = product_rtl_tag_builds();
    return builds;
}

}  // namespace

void register_rtl_tag_build(const RtlTagBuild& build) { rtl_tag_builds().push_back(build); }

std::unique_ptr<TagStore> make_tag_store(const Config& cfg, const std::string& waves) {
    const TagGeometry g = tag_geometry(cfg);
    const std::string replacement = cfg.choice("l2.replacement");
    if (cfg.choice("l2.tags") == "tlm") {
        if (!waves.empty()) throw std::invalid_argument("L2 waves need l2.tags = rtl");
        return std::make_unique<TlmTags>(g, replacement);
    }
    if (replacement != "lru") {
        throw ConfigError("l2.replacement = " + replacement +
                          ": the RTL tag pipeline (l2.tags = rtl) implements LRU only; use l2.tags = tlm for it");
    }
    if (rtl_tag_builds().empty()) {
        throw ConfigError("l2.tags = rtl: this pfsim was built without its RTL (bazel --define rtl=off); use l2.tags = tlm");
    }
    const auto period = static_cast<Tick>(1e12 / cfg.frequency("chip.clock") + 0.5);
    const bool fst = waves_format(waves) == WavesFormat::Fst;
    std::string builds;
    for (const RtlTagBuild& b : rtl_tag_builds()) {
        if (b.fst != fst) continue;
        try {
            return b.make(g, period, waves);
        } catch (const ConfigError& e) {
            builds += (builds.empty() ? "" : "; ") + std::string(e.what());
        }
    }
    throw ConfigError("l2.tags = rtl: no RTL build of the tags has this configuration's geometry (" +
                      std::to_string(g.slices) + " slices, " + std::to_string(g.sets) + " sets, " +
                      std::to_string(g.ways) + " ways, " + std::to_string(g.lines) + " lines of GM); builds with " +
                      (fst ? "FST" : "VCD") + " waves: " + builds + ". Add one with -G parameters in rtl_stubs/l2_tags/BUILD");
}

}  // namespace pfsim

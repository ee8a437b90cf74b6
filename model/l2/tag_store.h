// The L2's tags: which line each way of each set holds, its dirty bit and the
// replacement order. Two implementations answer the same operations: TlmTags
// (C++, any l2.replacement policy) and RtlTags (the rtl_stubs/l2_tags pipeline,
// verilated, LRU only; --set l2.tags=rtl).
// A slot of the L2's arrays is set * ways + way.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "base/zero_buffer.h"
#include "model/config/config.h"
#include "model/l2/replacement.h"

namespace pfsim {

struct TagGeometry {
    uint64_t sets = 0;
    uint64_t ways = 0;
    uint64_t slices = 0;     // set s belongs to slice s mod slices
    uint64_t lines = 0;      // line numbers run from 0 to lines - 1
};

struct TagResult {
    bool hit = false;
    unsigned way = 0;           // the hit, or the way allocated on a miss (0 when a lookup misses)
    bool dirty = false;         // the line's dirty bit after the operation
    bool victim_valid = false;  // the miss replaced this valid line:
    uint64_t victim_line = 0;
    bool victim_dirty = false;
    bool operator==(const TagResult& o) const {
        return hit == o.hit && way == o.way && dirty == o.dirty && victim_valid == o.victim_valid &&
               (!victim_valid || (victim_line == o.victim_line && victim_dirty == o.victim_dirty));
    }
};

class TagStore {
public:
    virtual ~TagStore() = default;
    // Where `line` is, if resident, and its dirty bit; changes nothing.
    virtual TagResult lookup(uint64_t set, uint64_t line, Tick when) = 0;
    // Accesses `line` (`by` a core's demand or a prefetch), allocating a way on a
    // miss: the first invalid one, else the replacement policy's victim (LRU:
    // the least recently used); `write` marks it dirty.
    virtual TagResult access(uint64_t set, uint64_t line, bool write, Tick when, Fill by) = 0;
    // A hint: `set` is accessed soon; the host may start loading its tags into
    // its cache. Changes nothing.
    virtual void warm_host_cache(uint64_t) const {}
};

class TlmTags final : public TagStore {
public:
    // `replacement`: a name of replacement_policies(); std::invalid_argument
    // otherwise, and when g.lines exceeds kMaxTaggedLines.
    explicit TlmTags(const TagGeometry& g, const std::string& replacement = "lru");
    TagResult lookup(uint64_t set, uint64_t line, Tick when) override;
    TagResult access(uint64_t set, uint64_t line, bool write, Tick when, Fill by) override;
    void warm_host_cache(uint64_t set) const override;

private:
    // The way of `set` whose tag is `tag`, or -1.
    int64_t find(uint64_t set, uint32_t tag) const;

    uint64_t ways_;
    uint64_t stride_;  // tags a set takes: 16 (padding included) for at most 16 ways
    uint32_t lanes_;   // with at most 16 ways, bit w for way w; else 0
    // Per way: line number + 1 (0 = invalid), at most kMaxTaggedLines; set s's
    // at s * stride_. The array starts on a 64-byte boundary: with at most 16
    // ways a set is one host cache line.
    ZeroArray<uint32_t> tag_;
    ZeroArray<uint8_t> dirty_;  // per slot
    std::unique_ptr<ReplacementPolicy> policy_;
};

// The configured implementation: l2.tags = tlm or rtl, with l2.replacement. An
// RTL store dumps its signals to `waves` (.vcd or .fst) unless it is empty.
// Throws ConfigError when the RTL was built for another geometry than the
// configuration's, or is asked for a policy other than LRU.
std::unique_ptr<TagStore> make_tag_store(const Config& cfg, const std::string& waves = "");
TagGeometry tag_geometry(const Config& cfg);

// A verilated build of rtl_stubs/l2_tags that make_tag_store may choose:
// `make` returns the store when the build has geometry g, else throws a
// ConfigError saying which geometry it has. The product has the a2a3 preset's
// builds (VCD and FST waves); a test adds its own geometry with
// register_rtl_tag_build before it configures an L2 (tests/support).
struct RtlTagBuild {
    bool fst;  // dumps FST waves; else VCD
    std::unique_ptr<TagStore> (*make)(const TagGeometry& g, Tick period, const std::string& waves);
};
void register_rtl_tag_build(const RtlTagBuild& build);
// The product's builds (rtl_tag_builds.cc); none in a pfsim built without its
// RTL (no_rtl_tag_builds.cc, --define rtl=off).
std::vector<RtlTagBuild> product_rtl_tag_builds();

}  // namespace pfsim

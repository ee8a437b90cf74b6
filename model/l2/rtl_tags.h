// The L2's tags answered by the RTL tag pipeline (rtl_stubs/l2_tags), driven
// pin by pin: each operation is presented for one cycle and its response read
// two cycles later. `Model` is a Verilated l2_tags (any build of it).
#pragma once

#include <stdexcept>
#include <string>

#include "model/config/config.h"
#include "model/l2/tag_store.h"
#include "rtl_stubs/clocked_model.h"

namespace pfsim {

// Drives a request onto an l2_tags model's pins (set s of the L2 is set
// s / slices of slice s mod slices).
template <class Model>
void present_tag_request(Model& p, uint64_t slices, bool access, uint64_t set, uint64_t line, bool write) {
    p.req_valid = 1;
    p.req_op = access;
    p.req_slice = static_cast<uint32_t>(set % slices);
    p.req_set = static_cast<uint32_t>(set / slices);
    p.req_tag = line;
    p.req_write = write;
}

// The response on an l2_tags model's pins.
template <class Model>
TagResult tag_response(const Model& p) {
    TagResult r;
    r.hit = p.resp_hit;
    r.way = p.resp_way;
    r.dirty = p.resp_dirty;
    r.victim_valid = p.resp_victim_valid;
    r.victim_line = p.resp_victim_tag;
    r.victim_dirty = p.resp_victim_dirty;
    return r;
}

template <class Model, class Tracer>
class RtlTags final : public TagStore {
public:
    RtlTags(const TagGeometry& g, Tick period, const std::string& waves = "")
        : rtl_("l2_tags", period, waves), slices_(g.slices) {
        const Model& p = rtl_.pins();
        const uint64_t sets = uint64_t{p.geometry_slices} * p.geometry_sets_per_slice;
        const uint64_t tag_bits = p.geometry_tag_bits;
        if (p.geometry_slices != g.slices || sets != g.sets || p.geometry_ways != g.ways ||
            (tag_bits < 64 && g.lines > (uint64_t{1} << tag_bits))) {
            // What this build is; make_tag_store names every build when none fits.
            throw ConfigError(std::to_string(p.geometry_slices) + " slices x " +
                              std::to_string(p.geometry_sets_per_slice) + " sets x " +
                              std::to_string(p.geometry_ways) + " ways, " + std::to_string(tag_bits) +
                              "-bit line numbers");
        }
        rtl_.reset(2);
        while (!rtl_.pins().req_ready) rtl_.cycle();  // the rows are cleared one set per cycle
    }

    TagResult lookup(uint64_t set, uint64_t line, Tick when) override { return run(false, set, line, false, when); }
    TagResult access(uint64_t set, uint64_t line, bool write, Tick when, Fill) override {  // LRU for every fill
        return run(true, set, line, write, when);
    }

private:
    TagResult run(bool access, uint64_t set, uint64_t line, bool write, Tick when) {
        rtl_.advance_to(when);
        Model& p = rtl_.pins();
        present_tag_request(p, slices_, access, set, line, write);
        rtl_.cycle();
        p.req_valid = 0;
        rtl_.cycle();
        if (!p.resp_valid) throw std::logic_error("pfsim: the RTL L2 tags did not answer in two cycles");
        return tag_response(p);
    }

    ClockedModel<Model, Tracer> rtl_;
    uint64_t slices_;
};

}  // namespace pfsim

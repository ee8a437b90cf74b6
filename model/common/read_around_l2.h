// A cached-path read carrying this extension reads around the L2, as a load
// through GM's uncached alias does on a2a3 (gm.l2_cache_offset;
// TLOAD<TLoadL2Hint::NotAlloc*>): a resident line is read as a hit without
// changing the replacement state; a line not resident is read from GM with a
// miss's timing, but nothing is allocated and nothing evicted.
#pragma once

#include <tlm>

namespace pfsim {

struct ReadAroundL2Extension : tlm::tlm_extension<ReadAroundL2Extension> {
    tlm::tlm_extension_base* clone() const override { return new ReadAroundL2Extension(*this); }
    void copy_from(const tlm::tlm_extension_base&) override {}
};

}  // namespace pfsim

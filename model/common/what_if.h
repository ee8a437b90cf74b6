// What-ifs the advisor measures by re-running (docs/advisor.md): a cached-path
// read carrying this extension makes its lines resident in L2 at no cost --
// no GM read, no slice time, each line ready at the read's issue -- as a
// prefetch would leave them (victims are evicted as by a prefetch, dirty ones
// written back); it moves no data and takes no time.
#pragma once

#include <tlm>

namespace pfsim {

struct ResidentExtension : tlm::tlm_extension<ResidentExtension> {
    tlm::tlm_extension_base* clone() const override { return new ResidentExtension(*this); }
    void copy_from(const tlm::tlm_extension_base&) override {}
};

}  // namespace pfsim

// The L2 tests' small cache (4 slices x 8 sets x 4 ways) in RTL: registered
// with make_tag_store when a test binary links this library, so that the
// tests' RTL twins can put the tags in the loop without the product carrying
// a build only they use.
#include "model/l2/rtl_tags.h"
#include "model/l2/tag_store.h"
#include "Vl2_tags_small.h"

namespace pfsim {
namespace {

const bool registered = [] {
    register_rtl_tag_build({false, [](const TagGeometry& g, Tick period, const std::string& waves) -> std::unique_ptr<TagStore> {
                                return std::make_unique<RtlTags<Vl2_tags_small, VerilatedVcdC>>(g, period, waves);
                            }});
    return true;
}();

}  // namespace
}  // namespace pfsim

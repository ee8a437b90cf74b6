// The product's builds of the RTL tag pipeline (rtl_stubs/l2_tags/BUILD).
#include "model/l2/rtl_tags.h"
#include "model/l2/tag_store.h"
#include "rtl_stubs/clocked_model.h"
#include "Vl2_tags.h"
#include "Vl2_tags_fst.h"

namespace pfsim {

namespace {

template <class Model, class Tracer>
std::unique_ptr<TagStore> make_rtl(const TagGeometry& g, Tick period, const std::string& waves) {
    return std::make_unique<RtlTags<Model, Tracer>>(g, period, waves);
}

}  // namespace

std::vector<RtlTagBuild> product_rtl_tag_builds() {
    return {{false, make_rtl<Vl2_tags, VerilatedVcdC>}, {true, make_rtl<Vl2_tags_fst, VerilatedFstC>}};
}

}  // namespace pfsim

// A pfsim built without its RTL (--define rtl=off) has no build of the tags.
#include "model/l2/tag_store.h"

namespace pfsim {

std::vector<RtlTagBuild> product_rtl_tag_builds() { return {}; }

}  // namespace pfsim

// make_rtl_frontend in a pfsim built without its RTL (--define rtl=off).
#include "model/config/config.h"
#include "model/sdma/sdma_frontend.h"

namespace pfsim {

std::unique_ptr<SdmaFrontend> make_rtl_frontend(const Config&, const std::string&) {
    throw ConfigError("sdma.frontend = rtl: this pfsim was built without its RTL (bazel --define rtl=off); "
                      "use sdma.frontend = tlm");
}

}  // namespace pfsim

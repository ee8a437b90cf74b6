#include "model/sdma/rtl_frontend.h"

#include "Vsdma_frontend.h"
#include "Vsdma_frontend_fst.h"

namespace pfsim {

std::unique_ptr<SdmaFrontend> make_rtl_frontend(const Config& cfg, const std::string& waves) {
    if (waves_format(waves) == WavesFormat::Fst) {
        return std::make_unique<RtlFrontendOf<Vsdma_frontend_fst, VerilatedFstC>>(cfg, waves);
    }
    return std::make_unique<RtlFrontendOf<Vsdma_frontend, VerilatedVcdC>>(cfg, waves);
}

}  // namespace pfsim

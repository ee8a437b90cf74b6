// The negative control: the RTL bridge's header does pull Verilator's in.
#include "model/sdma/rtl_frontend.h"

namespace pfsim::test {
#ifdef VERILATOR_VERILATED_H_
extern const bool kRtlBridgeReachesVerilator = true;
#else
extern const bool kRtlBridgeReachesVerilator = false;
#endif
}  // namespace pfsim::test

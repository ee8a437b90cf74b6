// Whether including the SoC's header pulls Verilator's in.
#include "model/soc/soc.h"

namespace pfsim::test {
#ifdef VERILATOR_VERILATED_H_
extern const bool kSocHeaderReachesVerilator = true;
#else
extern const bool kSocHeaderReachesVerilator = false;
#endif
}  // namespace pfsim::test

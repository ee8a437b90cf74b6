#include "runtime/platform/sim/sim_context.h"

#include <systemc>

namespace sc_core {
// libsystemc's current and default contexts (sc_simcontext.cpp); no public
// API replaces them.
extern sc_simcontext* sc_curr_simcontext;
extern sc_simcontext* sc_default_global_context;
}  // namespace sc_core

namespace pfsim {

void fresh_simulation_context() {
    static sc_core::sc_simcontext* const first = sc_core::sc_get_curr_simcontext();
    sc_core::sc_simcontext* current = sc_core::sc_get_curr_simcontext();
    if (current->get_status() == sc_core::SC_ELABORATION && !current->elaboration_done() &&
        sc_core::sc_get_top_level_objects(current).empty()) {
        return;  // nothing built in it yet
    }
    sc_core::sc_curr_simcontext = new sc_core::sc_simcontext();
    sc_core::sc_default_global_context = sc_core::sc_curr_simcontext;
    if (current != first) delete current;
}

}  // namespace pfsim

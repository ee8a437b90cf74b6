// SystemC keeps one simulation context per process and elaborates a design
// only before that context's first sc_start. fresh_simulation_context() lets
// a process build a new die after another has run: when the current context
// holds any object or has started, it is replaced by a new, empty one.
//
// Contract: call it only when no SystemC object of the current context is
// alive (the dies built in it are destroyed). A context that is still empty
// is kept, so a process's first die is built exactly as before. The
// process's first context stays allocated (libsystemc's own static events
// unregister from it at exit); later ones are deleted when replaced. Not
// thread-safe: one simulation at a time per process.
#pragma once

namespace pfsim {

void fresh_simulation_context();

}  // namespace pfsim

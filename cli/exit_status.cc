#include "cli/exit_status.h"

#include <new>
#include <stdexcept>

#include <systemc>

#include "session/run.h"
#include "cli/options.h"
#include "model/config/config.h"
#include "replay/trace.h"

namespace pfsim {

int run_guarded(const std::function<int()>& command, std::ostream& err) {
    const char* report = " (a fault of pfsim's, not of the input: please report it with the command line)";
    try {
        return command();
    } catch (const UsageError& e) {
        err << "pfsim: " << e.what() << "\n";
    } catch (const api::BadInput& e) {
        err << "pfsim: " << e.what() << "\n";
    } catch (const ConfigError& e) {
        err << "pfsim: configuration error: " << e.what() << "\n";
    } catch (const TraceError& e) {
        err << "pfsim: trace error: " << e.what() << "\n";
    } catch (const std::runtime_error& e) {
        err << "pfsim: error: " << e.what() << "\n";
    } catch (const std::bad_alloc&) {
        err << "pfsim: out of memory: the configuration or the arguments ask for more memory than this machine has"
               " (lower sizes such as l2.size, gm.size or a kernel's --arg)\n";
    } catch (const sc_core::sc_report& e) {
        err << "pfsim: internal error: SystemC: " << e.what() << report << "\n";
        return kExitInternal;
    } catch (const std::exception& e) {
        err << "pfsim: internal error: " << e.what() << report << "\n";
        return kExitInternal;
    } catch (...) {
        err << "pfsim: internal error: an exception of unknown type" << report << "\n";
        return kExitInternal;
    }
    return kExitBadInput;
}

}  // namespace pfsim

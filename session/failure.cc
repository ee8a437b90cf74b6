#include "session/failure.h"

#include <exception>
#include <stdexcept>

#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "runtime/worker.h"
#include "session/case_file.h"
#include "session/request.h"

namespace pfsim::api {

Failure failure_in_flight() {
    try {
        throw;
    } catch (const CompileError& e) {
        return {"compile", e.what()};
    } catch (const LoadError& e) {
        return {"bad_input", e.what()};
    } catch (const BadInput& e) {
        return {"bad_input", e.what()};
    } catch (const CaseError& e) {
        return {"bad_input", e.what()};
    } catch (const rt::RuntimeError& e) {
        return {"runtime", e.what(), true};
    } catch (const std::runtime_error& e) {
        return {"runtime", e.what()};
    }
}

}  // namespace pfsim::api

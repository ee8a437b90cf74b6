// pfsim's "runtime.h": what an orchestration that includes simpler's runtime
// header uses of it -- the orchestration API. The runtime's internals (its
// rings, shared memory, executor) are pfsim's own and not reachable.
#pragma once

#include "pto_orchestration_api.h"

// pfsim's "pto_orchestration_api.h": what an orchestration source includes
// (with CoreTaskArgsWithDeps, as simpler's does).
#pragma once

#include "runtime/orchestration/orchestration_api.h"
#include "tensor.h"
#include "pto_arg_with_deps.h"

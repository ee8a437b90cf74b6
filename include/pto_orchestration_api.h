// pfsim's "pto_orchestration_api.h": what an orchestration source includes.
#pragma once

#include "runtime/orchestration/orchestration_api.h"
#include "tensor.h"

// pfsim's "orchestration_api.h": the name simpler gives "pto_orchestration_api.h"
// after the pinned commit (simpler-compat.md §6); either may be included, or both.
#pragma once

#include "pto_orchestration_api.h"

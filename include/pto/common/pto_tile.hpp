// <pto/common/pto_tile.hpp> as kernels include it: the names are part of
// pfsim's <pto/pto-inst.hpp>.
#pragma once

#include "pto/pto-inst.hpp"

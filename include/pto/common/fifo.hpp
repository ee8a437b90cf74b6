// The TPipe FIFO types kernels include as <pto/common/fifo.hpp>: part of
// pfsim's <pto/pto-inst.hpp> (pto/pfsim_tpipe.hpp).
#pragma once

#include "pto/pto-inst.hpp"

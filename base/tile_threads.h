// The host threads tile arithmetic uses: pfsim::on_two_threads of the kernel ABI
// (include/pfsim_kernel_abi.h) is implemented here.
#pragma once

namespace pfsim {

// The threads PFSIM_TILE_THREADS asks for: 1 (the calling thread alone) or 2 (it and
// one helper thread); unset or empty, 2 where the host has two or more cores, else 1.
// Read once per process; throws std::runtime_error naming the variable for any other
// value (the command line checks it before any work: exit 2).
int tile_threads();

}  // namespace pfsim

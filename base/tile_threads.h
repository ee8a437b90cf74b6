// The host threads tile arithmetic uses: the calling thread and, where the process
// has one, a helper thread. The kernel ABI's pfsim::on_two_threads (model/core; its
// contract in include/pfsim_kernel_abi.h) runs on them; this knows no kernel ABI.
#pragma once

namespace pfsim {

// The threads PFSIM_TILE_THREADS asks for: 1 (the calling thread alone) or 2 (it and
// one helper thread); unset or empty, 2 where the host has two or more cores, else 1.
// Read once per process; throws std::runtime_error naming the variable for any other
// value (the command line checks it before any work: exit 2).
int tile_threads();

// Calls work(context, thread, begin, end) for consecutive pieces [begin, end) that
// together cover [0, items) once each, some on the calling thread (thread 0) and some
// on the helper (thread 1), and returns when every piece has returned; with one thread
// (tile_threads() == 1, or items == 1) it is one call, work(context, 0, 0, items);
// none when items <= 0.
// Where [0, items) is cut and who takes a piece vary from call to call. `work` must
// not throw, nor call this again. Called from one thread at a time (the simulation's).
using PieceWork = void (*)(void* context, int thread, int begin, int end);
void run_on_tile_threads(PieceWork work, void* context, int items);

}  // namespace pfsim

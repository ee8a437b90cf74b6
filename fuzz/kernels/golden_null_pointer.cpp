// A misbehaving [golden] source of pfsim's kernel corpus (docs/testing.md): a null pointer
// expect: SIGSEGV (invalid memory access at 0x0)
#include <cstdint>
#include "pfsim_golden.h"
extern "C" void compute_golden(pfsim::golden::Args& args) {
    volatile intptr_t null = 0;
    args.tensor("out").as<float>()[0] = *reinterpret_cast<volatile float*>(null);
}

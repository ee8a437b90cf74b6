// A misbehaving [golden] source of pfsim's kernel corpus (docs/testing.md): throw 42;
// expect: threw an exception of type int
#include "pfsim_golden.h"
extern "C" void compute_golden(pfsim::golden::Args&) { throw 42; }

// The pfsim Python package, embedded in the binary: unpacked into the compile
// cache with a note of this binary's path, so that `import pfsim` finds the
// simulator that unpacked it.
#pragma once

#include <string>

namespace pfsim {

// The folder to put on PYTHONPATH (it holds pfsim/); unpacked on first use.
std::string python_package_root();
// $PFSIM_PYTHON, else Debian's /usr/bin/python3 (with python3-torch), else python3.
std::string python_interpreter();

}  // namespace pfsim

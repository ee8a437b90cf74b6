// pfsim test PATH... [pytest options]: runs scene tests under pytest with the
// pfsim Python package (unpacked from this binary) and its pytest plugin.
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/options.h"
#include "cli/python_package.h"

namespace pfsim {

int cmd_test(const std::vector<std::string>& args) {
    if (args.empty()) throw UsageError("test takes the scene test files or folders to run (and pytest's options)");
    const std::string python = python_interpreter();
    std::vector<std::string> argv = {python, "-m", "pytest", "-p", "pfsim.plugin"};
    argv.insert(argv.end(), args.begin(), args.end());
    const std::string root = python_package_root();
    const char* old = std::getenv("PYTHONPATH");
    setenv("PYTHONPATH", (root + (old && *old ? ":" + std::string(old) : "")).c_str(), 1);
    // torch's OpenMP threads otherwise spin after each operation, taking the cores the
    // device process simulates on (a golden of 2,000 small matmuls: 8.1 s spinning, 0.44 s
    // passive, on 2 cores). The values are the same either way; a user's setting stays.
    setenv("OMP_WAIT_POLICY", "PASSIVE", 0);
    // Under `bazel run`, paths are the user's: run from their directory.
    if (const char* dir = std::getenv("BUILD_WORKING_DIRECTORY")) {
        if (chdir(dir) != 0) throw UsageError(std::string("cannot enter ") + dir);
    }
    std::vector<char*> c_argv;
    for (std::string& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    std::cout.flush();
    execvp(c_argv[0], c_argv.data());
    std::cerr << "pfsim: test: cannot run " << python << " (set PFSIM_PYTHON to a python3 with torch and pytest)\n";
    return 2;
}

int cmd_python_path(const std::vector<std::string>& args) {
    if (!args.empty()) throw UsageError("python-path takes no argument");
    std::cout << python_package_root() << "\n";
    return 0;
}

}  // namespace pfsim

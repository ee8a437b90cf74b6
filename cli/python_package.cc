#include "cli/python_package.h"

#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>

#include "loader/compiler.h"

namespace pfsim {

std::string python_package_root() {
    char exe[PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const std::string binary = n > 0 ? std::string(exe, static_cast<size_t>(n)) : "pfsim";
    static const std::string note = "# Written by the pfsim binary that unpacked this package.\nBINARY = " + [&] {
        std::string quoted = "'";
        for (char c : binary) quoted += c == '\\' || c == '\'' ? std::string("\\") + c : std::string(1, c);
        return quoted + "'";
    }() + "\n";
    return unpack_embedded(KernelCompiler().cache_dir(), "python", {{"pfsim/_binary.py", note.c_str(), note.size()}});
}

std::string python_interpreter() {
    if (const char* p = std::getenv("PFSIM_PYTHON"); p && *p) return p;
    if (std::filesystem::exists("/usr/bin/python3")) return "/usr/bin/python3";
    return "python3";
}

}  // namespace pfsim

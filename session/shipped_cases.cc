#include "session/shipped_cases.h"

#include "session/case_file.h"
#include "loader/compiler.h"
#include "loader/embedded_files.h"

namespace pfsim {

namespace {
// Where the embedded "cases" tree is unpacked (once per pfsim build).
std::string shipped_root() { return unpack_embedded(KernelCompiler().cache_dir(), "cases"); }
}  // namespace

std::vector<std::string> shipped_cases() {
    const std::string root = shipped_root();
    std::vector<std::string> cases;
    for (const EmbeddedFile& f : embedded_files("cases")) {
        const std::string path = f.path;
        if (path.rfind("cases/", 0) == 0 && is_case_file(path)) cases.push_back(root + "/" + path);
    }
    return cases;
}

std::string shipped_case_named(const std::string& name) {
    for (const std::string& path : shipped_cases()) {
        if (read_case(path).name == name) return path;
    }
    return "";
}

std::string shipped_case_label(const std::string& path) {
    const std::string root = shipped_root() + "/";
    return path.rfind(root, 0) == 0 ? path.substr(root.size()) : path;
}

}  // namespace pfsim

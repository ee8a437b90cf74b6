// Runs the pfsim binary (path in $PFSIM) from tests, capturing its output.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace pfsim::test {

struct Result {
    int status;
    std::string out, err;
};

inline std::string tmp(const std::string& name) {
    const char* dir = std::getenv("TEST_TMPDIR");
    return std::string(dir ? dir : "/tmp") + "/" + name;
}

// The compile cache tests share and keep across runs (docs/testing.md, "The
// compile cache across runs"): pfsim's default when HOME is unset, as under Bazel.
// A test of the cache itself, or of a cold one, takes a folder of its own.
inline std::string shared_cache() { return "/tmp/pfsim-cache-" + std::to_string(getuid()); }

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

inline Result pfsim(const std::string& args) {
    const std::string out = tmp("out.txt"), err = tmp("err.txt");
    const std::string cmd = std::string(std::getenv("PFSIM")) + " " + args + " >" + out + " 2>" + err;
    const int raw = std::system(cmd.c_str());
    return {WIFEXITED(raw) ? WEXITSTATUS(raw) : -1, slurp(out), slurp(err)};
}

inline std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = tmp(name);
    std::ofstream(path) << text;
    return path;
}

}  // namespace pfsim::test

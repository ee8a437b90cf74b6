// Runs the pfsim binary (path in $PFSIM) from tests, capturing its output.
#pragma once

#include <sys/wait.h>

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

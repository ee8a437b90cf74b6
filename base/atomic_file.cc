#include "base/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <stdexcept>

namespace pfsim {

std::string temporary_name(const std::string& path) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    static std::mt19937_64 random{std::random_device{}()};
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%016llx", static_cast<unsigned long long>(random()));
    return path + ".tmp." + host + "." + std::to_string(getpid()) + "." + suffix;
}

void write_atomically(const std::string& path, const std::string& content) {
    const std::string tmp = temporary_name(path);
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << content;
        out.flush();
        if (!out) {
            const std::string why = std::strerror(errno);
            std::remove(tmp.c_str());
            throw std::runtime_error(path + ": cannot write (" + why + ")");
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        const std::string why = std::strerror(errno);
        std::remove(tmp.c_str());
        throw std::runtime_error(path + ": cannot write (" + why + ")");
    }
}

bool read_whole_file(const std::string& path, std::string* text) {
    text->clear();
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) return false;
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    text->assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    if (in.bad()) text->clear();
    return !in.bad();
}

}  // namespace pfsim

#include "session/npy.h"

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pfsim {

namespace {

// The value of 'key' in the header's Python dict literal, as text.
std::string dict_value(const std::string& header, const std::string& key) {
    const size_t k = header.find("'" + key + "'");
    if (k == std::string::npos) return "";
    size_t v = header.find(':', k);
    if (v == std::string::npos) return "";
    ++v;
    while (v < header.size() && header[v] == ' ') ++v;
    if (v >= header.size()) return "";
    const char open = header[v];
    const char close = open == '(' ? ')' : open == '\'' ? '\'' : ',';
    const size_t end = header.find(close, v + 1);
    if (end == std::string::npos) return "";
    return header.substr(v, end - v + 1);
}

}  // namespace

NpyArray read_npy(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::invalid_argument(path + ": cannot read the .npy file");
    std::ostringstream ss;
    ss << in.rdbuf();
    const std::string bytes = ss.str();
    auto bad = [&](const std::string& why) { return std::invalid_argument(path + ": not a .npy file pfsim reads: " + why); };
    if (bytes.size() < 10 || bytes.compare(0, 6, "\x93NUMPY") != 0) throw bad("no NUMPY magic");
    const int major = static_cast<unsigned char>(bytes[6]);
    size_t header_len = 0, start = 0;
    if (major == 1) {
        header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
        start = 10;
    } else if (major == 2 || major == 3) {
        if (bytes.size() < 12) throw bad("truncated header");
        header_len = 0;
        for (int i = 0; i < 4; ++i) header_len |= size_t{static_cast<unsigned char>(bytes[8 + i])} << (8 * i);
        start = 12;
    } else {
        throw bad("format version " + std::to_string(major));
    }
    if (start + header_len > bytes.size()) throw bad("truncated header");
    const std::string header = bytes.substr(start, header_len);
    NpyArray a;
    const std::string descr = dict_value(header, "descr");
    if (descr.size() < 3 || descr.front() != '\'') throw bad("no descr");
    a.descr = descr.substr(1, descr.size() - 2);
    if (dict_value(header, "fortran_order").rfind("True", 0) == 0) throw bad("Fortran order");
    const std::string shape = dict_value(header, "shape");
    if (shape.empty() || shape.front() != '(') throw bad("no shape");
    std::istringstream dims(shape.substr(1, shape.size() - 2));
    std::string dim;
    while (std::getline(dims, dim, ',')) {
        const size_t first = dim.find_first_not_of(' ');
        if (first == std::string::npos) continue;
        try {
            a.shape.push_back(std::stoull(dim.substr(first)));
        } catch (const std::exception&) {
            throw bad("shape " + shape);
        }
    }
    if (a.descr.size() < 3 || (a.descr[0] != '<' && a.descr[0] != '|')) throw bad("byte order of " + a.descr);
    const std::string size = a.descr.substr(2);
    if (size.size() > 2 || size.find_first_not_of("0123456789") != std::string::npos) {
        throw bad("element size of " + a.descr);  // digits only: stoull would take "+8" or overflow
    }
    const uint64_t item = std::stoull(size);
    const size_t data_start = start + header_len;
    // Elements and data bytes; a product that overflows cannot match the file.
    const bool empty = std::find(a.shape.begin(), a.shape.end(), uint64_t{0}) != a.shape.end();
    uint64_t n = empty ? 0 : 1, need = 0;
    bool overflow = false;
    if (!empty) {
        for (uint64_t d : a.shape) overflow |= __builtin_mul_overflow(n, d, &n);
    }
    overflow |= __builtin_mul_overflow(n, item, &need);
    if (overflow || bytes.size() - data_start != need) {
        throw bad("holds " + std::to_string(bytes.size() - data_start) + " data bytes, its shape needs " +
                  (overflow ? std::string("more than 2^64") : std::to_string(need)));
    }
    a.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
    return a;
}

void write_npy(const std::string& path, const NpyArray& a) {
    std::string shape = "(";
    for (uint64_t d : a.shape) shape += std::to_string(d) + ",";
    if (a.shape.size() > 1) shape.pop_back();
    shape += ")";
    std::string header = "{'descr': '" + a.descr + "', 'fortran_order': False, 'shape': " + shape + ", }";
    while ((10 + header.size() + 1) % 64) header += ' ';
    header += '\n';
    std::ofstream out(path, std::ios::binary);
    out.write("\x93NUMPY\x01\x00", 8);
    const char len[2] = {static_cast<char>(header.size() & 0xff), static_cast<char>(header.size() >> 8)};
    out.write(len, 2);
    out << header;
    out.write(reinterpret_cast<const char*>(a.data.data()), static_cast<std::streamsize>(a.data.size()));
    if (!out.flush()) throw std::runtime_error("cannot write '" + path + "'");
}

}  // namespace pfsim

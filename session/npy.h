// NumPy .npy files (format versions 1-3, little-endian or byte-sized
// elements, C order): what case files read initial values and goldens from,
// and what `--outputs DIR` writes.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pfsim {

struct NpyArray {
    std::string descr;            // "<f4", "<f2", "|i1", ...
    std::vector<uint64_t> shape;
    std::vector<uint8_t> data;    // C order
};

// Throws std::invalid_argument naming the file and what is wrong.
NpyArray read_npy(const std::string& path);
// Throws std::runtime_error when the file cannot be written.
void write_npy(const std::string& path, const NpyArray& array);

}  // namespace pfsim

// Tensors whose GM is pages of a client's file, mapped for one run: their
// initial values are the file's bytes and what the kernels write lands in the
// file (or, mapped privately, stays in the die), with no copy either way (the
// Python package's transfer files, arguments and host buffers, docs/python.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/platform/sim/sim_platform.h"

namespace pfsim::api {

class FilePages {
public:
    FilePages() = default;
    // Unmaps every tensor mapped and frees each die's GM from the first of
    // them on (a die's GM is a stack: map nothing else on it meanwhile).
    ~FilePages();
    FilePages(const FilePages&) = delete;
    FilePages& operator=(const FilePages&) = delete;

    // Shared: what the die writes lands in the file. Private: the die's writes
    // stay its own (copied page by page as written); the file is only read.
    enum class Pages { Shared, Private };
    // Allocates `bytes` of `die`'s GM and maps there the pages [offset, offset
    // + bytes rounded up to 4096) of `file`: the GM address. Throws BadInput
    // beginning with `what` when the file cannot be opened, the offset is not
    // a multiple of 4096 or the pages lie beyond the file, rt::RuntimeError
    // when the mapping fails.
    uint64_t map(SimPlatform& die, const std::string& file, uint64_t offset, uint64_t bytes, const std::string& what,
                 Pages pages = Pages::Shared);

private:
    struct Mapped {
        SimPlatform* die;
        uint64_t gm, span;
    };
    std::vector<Mapped> mapped_;
    std::vector<Mapped> first_;  // each die's first mapped tensor
};

}  // namespace pfsim::api

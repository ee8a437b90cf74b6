#include "base/host_buffer.h"

#include <sys/mman.h>

#include <cstring>

namespace pfsim {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// Reserves `bytes` (untouched) and advises the whole huge pages inside it.
void reserve_advised(std::vector<uint8_t>& v, size_t bytes) {
    v.reserve(bytes);
    if (bytes < kHugePage) return;
    const auto begin = reinterpret_cast<uintptr_t>(v.data());
    const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

}  // namespace

std::vector<uint8_t> host_buffer(size_t bytes) {
    std::vector<uint8_t> v;
    reserve_advised(v, bytes);
    v.resize(bytes);
    return v;
}

std::vector<uint8_t> host_buffer_copy(const std::vector<uint8_t>& data) {
    std::vector<uint8_t> v;
    reserve_advised(v, data.size());
    v.assign(data.begin(), data.end());
    return v;
}

}  // namespace pfsim

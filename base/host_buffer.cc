#include "base/host_buffer.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <thread>

namespace pfsim {

namespace {

constexpr size_t kHugePage = size_t{2} << 20;
constexpr size_t kPageBytes = size_t{4} << 10;
// From this size on, the first touch of a buffer's pages (the host's page
// faults and zeroing, most of the cost on virtual machines) and large copies
// are spread over the host's threads.
constexpr size_t kParallelBytes = size_t{32} << 20;

// f(begin, end) over [0, bytes) in pieces of whole huge pages, one per host
// thread, run at once.
template <typename F>
void in_parallel_pieces(size_t bytes, F f) {
    const size_t threads = std::max(1u, std::thread::hardware_concurrency());
    const size_t piece = std::max(kHugePage, (bytes / threads + kHugePage - 1) / kHugePage * kHugePage);
    std::vector<std::thread> others;
    for (size_t begin = piece; begin < bytes; begin += piece) {
        others.emplace_back([&f, begin, end = std::min(bytes, begin + piece)] { f(begin, end); });
    }
    f(0, std::min(bytes, piece));
    for (std::thread& t : others) t.join();
}

// Reserves `bytes`, advises the whole huge pages inside it, and for a large
// buffer faults its pages in on every host thread.
void reserve_advised(std::vector<uint8_t>& v, size_t bytes) {
    v.reserve(bytes);
    advise_huge_pages(v.data(), bytes);
    if (bytes < kParallelBytes) return;
    const auto begin = reinterpret_cast<uintptr_t>(v.data());
    in_parallel_pieces(bytes, [begin](size_t from, size_t to) {
        const uintptr_t a = (begin + from + kPageBytes - 1) & ~(kPageBytes - 1), b = (begin + to) & ~(kPageBytes - 1);
        // Advice: a kernel without MADV_POPULATE_WRITE (before 5.14) leaves the faults to the first writes.
        if (b > a) madvise(reinterpret_cast<void*>(a), b - a, MADV_POPULATE_WRITE);
    });
}

}  // namespace

void advise_huge_pages(void* p, size_t bytes) {
    const auto begin = reinterpret_cast<uintptr_t>(p);
    const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
    const uintptr_t last = (begin + bytes) & ~(kHugePage - 1);
    if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

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

void parallel_copy(void* dst, const void* src, size_t bytes) {
    if (bytes < kParallelBytes) {
        std::memcpy(dst, src, bytes);
        return;
    }
    in_parallel_pieces(bytes, [dst, src](size_t from, size_t to) {
        std::memcpy(static_cast<uint8_t*>(dst) + from, static_cast<const uint8_t*>(src) + from, to - from);
    });
}

}  // namespace pfsim

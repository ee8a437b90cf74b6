// Sparse byte store over one reserved range of host address space: memory use
// grows with the pages touched (host huge pages, 2 MiB, when asked for and the
// host's transparent huge pages allow them; else the base pages, 4 KiB), never
// with the capacity, and unwritten bytes read as zero (the kernel's zero page
// until first written).
//
// The range is what simulated GM looks like to kernels: address `a` of the
// store is the host byte at host_base() + a, so a `__gm__` pointer a kernel
// dereferences is a plain host pointer into it (see Core::on_raw_access).
// Touched pages are counted at 64 KiB granularity for writes made through
// write(); bytes a kernel stores through a raw pointer are counted when the
// model writes them back.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

namespace pfsim {

class BackingStore {
public:
    static constexpr uint64_t kPageBytes = 64 * 1024;

    // Reserves `capacity` bytes of address space (no memory), advised for huge
    // pages when `huge_pages` (gm.host_pages = "huge"). Throws
    // std::runtime_error when the host cannot reserve it.
    explicit BackingStore(uint64_t capacity, bool huge_pages = true);
    ~BackingStore();
    BackingStore(const BackingStore&) = delete;
    BackingStore& operator=(const BackingStore&) = delete;

    uint64_t capacity() const { return capacity_; }
    bool contains(uint64_t addr, uint64_t len) const {
        return addr <= capacity_ && len <= capacity_ - addr;
    }
    // Callers check contains() first; out-of-range access is a programming error.
    void read(uint64_t addr, void* dst, size_t len) const { std::memcpy(dst, base_ + addr, len); }
    void write(uint64_t addr, const void* src, size_t len);
    // Where store address 0 is in host memory.
    uint8_t* host_base() const { return base_; }
    size_t touched_pages() const { return touched_pages_; }
    uint64_t touched_bytes() const { return touched_pages_ * kPageBytes; }

private:
    uint64_t capacity_;
    uint8_t* base_;
    std::vector<uint64_t> touched_;  // one bit per page
    size_t touched_pages_ = 0;
};

}  // namespace pfsim

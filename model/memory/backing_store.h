// Sparse, page-granular byte store: memory use grows with the pages touched,
// never with the capacity. Unwritten bytes read as zero. Pages are found through
// a two-level table (no hashing): a directory of 1 GiB regions, each a lazily
// allocated array of page pointers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace pfsim {

class BackingStore {
public:
    static constexpr uint64_t kPageBytes = 64 * 1024;
    static constexpr uint64_t kRegionBytes = uint64_t{1} << 30;

    explicit BackingStore(uint64_t capacity);

    uint64_t capacity() const { return capacity_; }
    bool contains(uint64_t addr, uint64_t len) const {
        return addr <= capacity_ && len <= capacity_ - addr;
    }
    // Callers check contains() first; out-of-range access is a programming error.
    void read(uint64_t addr, void* dst, size_t len) const;
    void write(uint64_t addr, const void* src, size_t len);
    size_t touched_pages() const { return touched_pages_; }
    uint64_t touched_bytes() const { return touched_pages_ * kPageBytes; }

private:
    static constexpr uint64_t kPagesPerRegion = kRegionBytes / kPageBytes;
    using Region = std::unique_ptr<std::unique_ptr<uint8_t[]>[]>;

    const uint8_t* find_page(uint64_t addr) const;
    uint8_t* make_page(uint64_t addr);

    uint64_t capacity_;
    std::vector<Region> regions_;
    size_t touched_pages_ = 0;
};

}  // namespace pfsim

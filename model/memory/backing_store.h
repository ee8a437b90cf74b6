// Sparse, page-granular byte store: memory use grows with the pages touched,
// never with the capacity. Unwritten bytes read as zero.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>

namespace pfsim {

class BackingStore {
public:
    static constexpr uint64_t kPageBytes = 64 * 1024;

    explicit BackingStore(uint64_t capacity) : capacity_(capacity) {}

    uint64_t capacity() const { return capacity_; }
    bool contains(uint64_t addr, uint64_t len) const {
        return addr <= capacity_ && len <= capacity_ - addr;
    }
    // Callers check contains() first; out-of-range access is a programming error.
    void read(uint64_t addr, void* dst, size_t len) const;
    void write(uint64_t addr, const void* src, size_t len);
    size_t touched_pages() const { return pages_.size(); }

private:
    uint8_t* page(uint64_t number, bool allocate) const;

    uint64_t capacity_;
    mutable std::unordered_map<uint64_t, std::unique_ptr<uint8_t[]>> pages_;
    mutable uint64_t last_number_ = ~0ull;
    mutable uint8_t* last_page_ = nullptr;
};

}  // namespace pfsim

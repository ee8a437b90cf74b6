// Fixed-size arrays that read as zeros until written. Their memory comes zeroed
// from the host (calloc: a large one is fresh pages the kernel zeroes on first
// touch), so making one costs nothing for the elements never used — a die's 72
// cores have 27 MiB of local buffers and its L2 15 MiB of per-line state, most of
// which a short run never touches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>

namespace pfsim {

// `T`: an element whose all-zero bytes are its initial state.
template <class T>
class ZeroArray {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "a ZeroArray's elements start as zero bytes and are never destroyed");

public:
    ZeroArray() = default;
    explicit ZeroArray(size_t n) : items_(static_cast<T*>(std::calloc(n ? n : 1, sizeof(T)))), size_(n) {
        if (!items_) throw std::bad_alloc();
    }

    T* data() { return items_.get(); }
    const T* data() const { return items_.get(); }
    T& operator[](size_t i) { return items_.get()[i]; }
    const T& operator[](size_t i) const { return items_.get()[i]; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

private:
    struct Free {
        void operator()(T* p) const { std::free(p); }
    };
    std::unique_ptr<T[], Free> items_;
    size_t size_ = 0;
};

// A core's local buffer (UB, L1, L0A/B/C): bytes.
using ZeroBuffer = ZeroArray<uint8_t>;

}  // namespace pfsim

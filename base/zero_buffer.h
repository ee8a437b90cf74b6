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

// `T`: an element whose all-zero bytes are its initial state. The first
// element starts on a 64-byte boundary (a host cache line).
template <class T>
class ZeroArray {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>,
                  "a ZeroArray's elements start as zero bytes and are never destroyed");
    static constexpr size_t kAlign = 64;

public:
    ZeroArray() = default;
    explicit ZeroArray(size_t n) : memory_(static_cast<uint8_t*>(std::calloc(n * sizeof(T) + kAlign, 1))), size_(n) {
        if (!memory_) throw std::bad_alloc();
        const auto at = reinterpret_cast<uintptr_t>(memory_.get());
        items_ = reinterpret_cast<T*>(memory_.get() + (kAlign - at % kAlign) % kAlign);
    }

    T* data() { return items_; }
    const T* data() const { return items_; }
    T& operator[](size_t i) { return items_[i]; }
    const T& operator[](size_t i) const { return items_[i]; }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

private:
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> memory_;
    T* items_ = nullptr;
    size_t size_ = 0;
};

// A core's local buffer (UB, L1, L0A/B/C): bytes.
using ZeroBuffer = ZeroArray<uint8_t>;

}  // namespace pfsim

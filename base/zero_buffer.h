// A fixed-size byte buffer that reads as zeros until written. Its memory comes
// zeroed from the host (calloc: a large one is fresh pages the kernel zeroes
// on first touch), so making one costs nothing for the bytes never used — a
// die's 72 cores have 27 MiB of local buffers, most of which a run never
// touches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>

namespace pfsim {

class ZeroBuffer {
public:
    ZeroBuffer() = default;
    explicit ZeroBuffer(size_t bytes) : bytes_(static_cast<uint8_t*>(std::calloc(bytes ? bytes : 1, 1))), size_(bytes) {
        if (!bytes_) throw std::bad_alloc();
    }

    uint8_t* data() { return bytes_.get(); }
    const uint8_t* data() const { return bytes_.get(); }
    size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }

private:
    struct Free {
        void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t[], Free> bytes_;
    size_t size_ = 0;
};

}  // namespace pfsim

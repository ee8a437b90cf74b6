#include "model/memory/backing_store.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace pfsim {

uint8_t* BackingStore::page(uint64_t number, bool allocate) const {
    if (number == last_number_) return last_page_;
    auto it = pages_.find(number);
    uint8_t* p = nullptr;
    if (it != pages_.end()) {
        p = it->second.get();
    } else if (allocate) {
        auto fresh = std::make_unique<uint8_t[]>(kPageBytes);  // value-initialised: zeros
        p = fresh.get();
        pages_.emplace(number, std::move(fresh));
    } else {
        return nullptr;  // untouched page: not cached, so a later write allocates it
    }
    last_number_ = number;
    last_page_ = p;
    return p;
}

void BackingStore::read(uint64_t addr, void* dst, size_t len) const {
    assert(contains(addr, len));
    auto* out = static_cast<uint8_t*>(dst);
    while (len > 0) {
        uint64_t offset = addr % kPageBytes;
        size_t n = std::min<uint64_t>(len, kPageBytes - offset);
        const uint8_t* p = page(addr / kPageBytes, false);
        if (p) {
            std::memcpy(out, p + offset, n);
        } else {
            std::memset(out, 0, n);
        }
        out += n;
        addr += n;
        len -= n;
    }
}

void BackingStore::write(uint64_t addr, const void* src, size_t len) {
    assert(contains(addr, len));
    const auto* in = static_cast<const uint8_t*>(src);
    while (len > 0) {
        uint64_t offset = addr % kPageBytes;
        size_t n = std::min<uint64_t>(len, kPageBytes - offset);
        std::memcpy(page(addr / kPageBytes, true) + offset, in, n);
        in += n;
        addr += n;
        len -= n;
    }
}

}  // namespace pfsim

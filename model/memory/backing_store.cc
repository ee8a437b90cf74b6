#include "model/memory/backing_store.h"

#include <algorithm>
#include <cassert>
#include <cstring>

namespace pfsim {

BackingStore::BackingStore(uint64_t capacity)
    : capacity_(capacity), regions_((capacity + kRegionBytes - 1) / kRegionBytes) {}

const uint8_t* BackingStore::find_page(uint64_t addr) const {
    const Region& region = regions_[addr / kRegionBytes];
    if (!region) return nullptr;
    return region[(addr % kRegionBytes) / kPageBytes].get();
}

uint8_t* BackingStore::make_page(uint64_t addr) {
    Region& region = regions_[addr / kRegionBytes];
    if (!region) region = std::make_unique<std::unique_ptr<uint8_t[]>[]>(kPagesPerRegion);
    std::unique_ptr<uint8_t[]>& page = region[(addr % kRegionBytes) / kPageBytes];
    if (!page) {
        page = std::make_unique<uint8_t[]>(kPageBytes);  // value-initialised: zeros
        ++touched_pages_;
    }
    return page.get();
}

void BackingStore::read(uint64_t addr, void* dst, size_t len) const {
    assert(contains(addr, len));
    auto* out = static_cast<uint8_t*>(dst);
    while (len > 0) {
        const uint64_t offset = addr % kPageBytes;
        const size_t n = std::min<uint64_t>(len, kPageBytes - offset);
        if (const uint8_t* p = find_page(addr)) {
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
        const uint64_t offset = addr % kPageBytes;
        const size_t n = std::min<uint64_t>(len, kPageBytes - offset);
        std::memcpy(make_page(addr) + offset, in, n);
        in += n;
        addr += n;
        len -= n;
    }
}

}  // namespace pfsim

#include "model/memory/backing_store.h"

#include <sys/mman.h>

#include <cassert>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pfsim {

BackingStore::BackingStore(uint64_t capacity, bool huge_pages)
    : capacity_(capacity), touched_((capacity / kPageBytes + 64) / 64, 0) {
    void* p = mmap(nullptr, capacity ? capacity : 1, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) {
        throw std::runtime_error("cannot reserve " + std::to_string(capacity) +
                                 " bytes of address space for simulated memory: " + std::strerror(errno));
    }
    base_ = static_cast<uint8_t*>(p);
    // Huge pages where the host allows them per range (THP "madvise"): a first
    // write faults once per 2 MiB instead of once per 4 KiB (replay of random
    // writes over 512 MiB: 163k faults -> 32k), but a sparse write backs all of
    // its 2 MiB. Advice only; a refusal changes nothing. Small pages are refused
    // huge ones even where THP is "always".
    madvise(p, capacity ? capacity : 1, huge_pages ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

BackingStore::~BackingStore() { munmap(base_, capacity_ ? capacity_ : 1); }

void BackingStore::write(uint64_t addr, const void* src, size_t len) {
    assert(contains(addr, len));
    if (len == 0) return;
    // A kernel's raw store wrote the bytes in place; the model writes them "again" from there.
    if (src != base_ + addr) std::memcpy(base_ + addr, src, len);
    for (uint64_t page = addr / kPageBytes; page <= (addr + len - 1) / kPageBytes; ++page) {
        uint64_t& word = touched_[page / 64];
        const uint64_t bit = uint64_t{1} << (page % 64);
        if (!(word & bit)) {
            word |= bit;
            ++touched_pages_;
        }
    }
}

}  // namespace pfsim

#include "model/memory/backing_store.h"

#include <fcntl.h>
#include <linux/magic.h>
#include <sys/mman.h>
#include <sys/vfs.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

#include "base/host_buffer.h"

namespace pfsim {

BackingStore::HostPages BackingStore::host_pages(const std::string& name) {
    if (name == "huge") return HostPages::Huge;
    if (name == "small") return HostPages::Small;
    return HostPages::Auto;
}

BackingStore::BackingStore(uint64_t capacity, HostPages pages, uint64_t alias_offset)
    : capacity_(capacity), touched_((capacity / kPageBytes + 64) / 64, 0), pages_(pages) {
    if (alias_offset && alias_offset < capacity) throw std::logic_error("pfsim: GM's alias overlaps GM");
    void* p = mmap(nullptr, capacity ? capacity : 1, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) {
        throw std::runtime_error("cannot reserve " + std::to_string(capacity) +
                                 " bytes of address space for simulated memory: " + std::strerror(errno));
    }
    base_ = static_cast<uint8_t*>(p);
    // Advice only (a host without transparent huge pages ignores it); "small"
    // and "auto" refuse huge pages even where THP is "always".
    madvise(p, capacity ? capacity : 1, pages == HostPages::Huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
    if (!alias_offset || !capacity) return;
    // The alias range only, inaccessible: no other mapping of the host can land
    // where a kernel's alias pointer points. (Not the gap up to it: at 8 TiB a
    // whole-span reservation per die ran a process out of address space.)
    void* a = mmap(base_ + alias_offset, capacity, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE,
                   -1, 0);
    if (a == base_ + alias_offset) {
        alias_ = static_cast<uint8_t*>(a);
        return;
    }
    const int why = errno;
    if (a != MAP_FAILED) munmap(a, capacity);  // a kernel without MAP_FIXED_NOREPLACE placed it elsewhere
    // Past the host's address space (ENOMEM) nothing can be mapped there: nothing to keep.
    if (a == MAP_FAILED && why == ENOMEM) return;
    munmap(base_, capacity);
    throw std::runtime_error("cannot keep the host range of GM's uncached alias (gm.l2_cache_offset) for it: " +
                             std::string(a == MAP_FAILED ? std::strerror(why) : "the kernel would not place it there"));
}

void BackingStore::map_file(uint64_t addr, uint64_t len, int fd, uint64_t offset) {
    assert(contains(addr, len));
    if (len == 0) return;
    void* p = mmap(base_ + addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) {
        const std::string why = std::strerror(errno);
        unmap_file(addr, len);  // a failed MAP_FIXED may have left the range unmapped
        throw std::runtime_error("cannot map " + std::to_string(len) + " bytes of a file at offset " +
                                 std::to_string(offset) + " into simulated memory: " + why);
    }
#ifdef MADV_POPULATE_WRITE
    // Its pages writable now, in one call, not a page fault per 4 KiB the run writes (a
    // shared mapping's write faults map one page each). A memory file's whole range: its
    // holes take pages when read through a shared mapping too. A file on disk's data only:
    // populating a hole writably allocates its blocks (a sparse 4 GiB tensor file grew to
    // 4 GiB on disk), so holes come as they are touched. Only a speed-up: without it
    // (Linux before 5.14) every page comes as it is touched.
    struct statfs fs {};
    if (fstatfs(fd, &fs) == 0 && fs.f_type == TMPFS_MAGIC) {
        // Its holes (an output nobody wrote yet) take their pages in one call first: the
        // populate then only maps them, a fifth less CPU than a fault allocating each.
        fallocate(fd, FALLOC_FL_KEEP_SIZE, static_cast<off_t>(offset), static_cast<off_t>(len));
        madvise(p, len, MADV_POPULATE_WRITE);
        return;
    }
    const auto start = static_cast<off_t>(offset), end = static_cast<off_t>(offset + len);
    const auto page = static_cast<off_t>(sysconf(_SC_PAGESIZE));
    for (off_t at = start; at < end;) {
        const off_t data = lseek(fd, at, SEEK_DATA);
        if (data < 0 && errno == ENXIO) break;  // no data from `at` on
        const off_t from = data < 0 ? at : data / page * page;  // no SEEK_DATA: one extent
        if (from >= end) break;
        const off_t hole = data < 0 ? end : lseek(fd, data, SEEK_HOLE);
        const off_t to = hole < 0 ? end : std::min(end, (hole + page - 1) / page * page);
        madvise(static_cast<uint8_t*>(p) + (from - start), static_cast<size_t>(to - from), MADV_POPULATE_WRITE);
        at = to;
    }
#endif
}

void BackingStore::unmap_file(uint64_t addr, uint64_t len) {
    assert(contains(addr, len));
    if (len == 0) return;
    void* p = mmap(base_ + addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED,
                   -1, 0);
    if (p == MAP_FAILED) std::abort();  // the store would have a hole: nothing sensible can go on
    madvise(p, len, pages_ == HostPages::Huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE);
}

void BackingStore::zero(uint64_t addr, size_t len) {
    assert(contains(addr, len));
    if (len == 0) return;
    const uint8_t* p = base_ + addr;
    // A read of a page no store reached maps the host's shared zero page: no memory.
    const bool zeros = std::all_of(p, p + len, [](uint8_t b) { return b == 0; });
    if (!zeros) std::memset(base_ + addr, 0, len);
    write(addr, base_ + addr, len);  // counts the pages; copies nothing
}

void BackingStore::release(uint64_t addr, uint64_t len) {
    assert(contains(addr, len));
    const auto page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    const uint64_t from = (reinterpret_cast<uintptr_t>(base_) + addr + page - 1) / page * page;
    const uint64_t to = (reinterpret_cast<uintptr_t>(base_) + addr + len) / page * page;
    if (from < to) madvise(reinterpret_cast<void*>(from), to - from, MADV_DONTNEED);
}

BackingStore::~BackingStore() {
    munmap(base_, capacity_ ? capacity_ : 1);
    if (alias_) munmap(alias_, capacity_);
}

void BackingStore::write(uint64_t addr, const void* src, size_t len) {
    assert(contains(addr, len));
    if (len == 0) return;
    // A kernel's raw store wrote the bytes in place; the model writes them "again" from there.
    if (src != base_ + addr) {
        if (pages_ == HostPages::Auto) advise_huge_pages(base_ + addr, len);
        parallel_copy(base_ + addr, src, len);
    }
    for (uint64_t page = addr / kPageBytes; page <= (addr + len - 1) / kPageBytes; ++page) {
        if (!written(page)) {
            touched_[page / 64] |= uint64_t{1} << (page % 64);
            ++touched_pages_;
        }
    }
}

void BackingStore::read_written(uint64_t addr, uint8_t* dst, size_t len) const {
    while (len) {
        const uint64_t page = addr / kPageBytes;
        const size_t n = std::min<uint64_t>(len, (page + 1) * kPageBytes - addr);
        if (written(page)) {
            std::memcpy(dst, base_ + addr, n);
        } else {
            std::memset(dst, 0, n);
        }
        addr += n;
        dst += n;
        len -= n;
    }
}

}  // namespace pfsim

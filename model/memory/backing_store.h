// Sparse byte store over one reserved range of host address space: memory use
// grows with the host pages touched (see HostPages), never with the capacity,
// and unwritten bytes read as zero.
//
// The range is what simulated GM looks like to kernels: address `a` of the
// store is the host byte at host_base() + a, so a `__gm__` pointer a kernel
// dereferences is a plain host pointer into it (see Core::on_raw_access).
// Touched pages are counted at 64 KiB granularity for writes made through
// write(); bytes a kernel stores through a raw pointer are counted when the
// model writes them back.
//
// GM's uncached alias (gm.l2_cache_offset): the store can also keep the host
// range [host_base() + alias_offset, + capacity) for itself, inaccessible, so
// that a kernel pointer into the alias names GM and nothing else of the host's
// (the core serves loads through it; see Core::gm_alias_address).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

namespace pfsim {

class BackingStore {
public:
    static constexpr uint64_t kPageBytes = 64 * 1024;

    // The host pages behind the range (gm.host_pages). Huge: 2 MiB pages where
    // the host's transparent huge pages allow (a fault per 2 MiB; a sparse write
    // backs all of its 2 MiB). Small: base pages (4 KiB). Auto: huge pages for
    // the whole 2 MiB regions a write() of 2 MiB or more covers (tensors copied
    // in), base pages elsewhere.
    enum class HostPages { Huge, Small, Auto };
    static HostPages host_pages(const std::string& name);  // "huge", "small", else auto (the configuration checked it)

    // Reserves `capacity` bytes of address space (no memory), and with a
    // non-zero `alias_offset` (at least `capacity`) the alias range
    // [host_base() + alias_offset, + capacity) too (not the gap between). Throws
    // std::runtime_error when the host cannot reserve it.
    explicit BackingStore(uint64_t capacity, HostPages pages = HostPages::Auto, uint64_t alias_offset = 0);
    ~BackingStore();
    BackingStore(const BackingStore&) = delete;
    BackingStore& operator=(const BackingStore&) = delete;

    uint64_t capacity() const { return capacity_; }
    bool contains(uint64_t addr, uint64_t len) const {
        return addr <= capacity_ && len <= capacity_ - addr;
    }
    // Callers check contains() first; out-of-range access is a programming error.
    void read(uint64_t addr, void* dst, size_t len) const {
        if (unwritten_reads_zero_) {
            read_written(addr, static_cast<uint8_t*>(dst), len);
        } else {
            std::memcpy(dst, base_ + addr, len);
        }
    }
    void write(uint64_t addr, const void* src, size_t len);
    // From now on read() answers the pages no write() has reached with zeros,
    // without touching their host memory (which some hosts back with real
    // pages on a read). Only for a store that every writer reaches through
    // write(): not one whose host range kernels store into (pfsim replay has none).
    void read_unwritten_as_zero() { unwritten_reads_zero_ = true; }
    // Backs [addr, addr + len) with bytes [offset, offset + len) of the open
    // file `fd`, shared: the store's bytes there are the file's (nothing is
    // copied) and every store lands in the file. addr, len and offset are
    // multiples of the host page size, the range within the store. Touched
    // pages are counted by write() as before (a write() whose source is the
    // store's own bytes copies nothing). Throws std::runtime_error when the
    // host refuses the mapping. Moves fd's file offset.
    void map_file(uint64_t addr, uint64_t len, int fd, uint64_t offset);
    // Detaches [addr, addr + len) from the file map_file put there: the range
    // reads as zeros again, its pages private to the store.
    void unmap_file(uint64_t addr, uint64_t len);
    // Makes [addr, addr + len) read as zeros, counted as a write() of zeros is,
    // without touching the host pages of it that read as zeros already (a page
    // never written, or given back by release()).
    void zero(uint64_t addr, size_t len);
    // Gives the host pages wholly inside [addr, addr + len) back to the host:
    // they read as zeros again and hold no memory until written. For bytes
    // nothing will read again (touched_bytes() is unchanged: it counts what
    // writes allocated). Not for a range map_file backs.
    void release(uint64_t addr, uint64_t len);
    // Where store address 0 is in host memory.
    uint8_t* host_base() const { return base_; }
    size_t touched_pages() const { return touched_pages_; }
    uint64_t touched_bytes() const { return touched_pages_ * kPageBytes; }

private:
    bool written(uint64_t page) const { return touched_[page / 64] >> (page % 64) & 1; }
    void read_written(uint64_t addr, uint8_t* dst, size_t len) const;

    uint64_t capacity_;
    uint8_t* base_;
    uint8_t* alias_ = nullptr;  // the alias range kept for it (PROT_NONE), if any
    std::vector<uint64_t> touched_;  // one bit per page
    size_t touched_pages_ = 0;
    HostPages pages_;
    bool unwritten_reads_zero_ = false;
};

}  // namespace pfsim

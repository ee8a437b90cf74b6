#include "session/file_pages.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "model/memory/backing_store.h"
#include "runtime/worker.h"
#include "session/request.h"

namespace pfsim::api {

namespace {
constexpr uint64_t kPage = 4096;  // SimPlatform's GM alignment, and the host's page

// Maps the file's pages at `p` now, read-only until written (so a private mapping's
// pages stay the file's), in one call rather than a page fault per 64 KiB read. Only
// a speed-up: a host without MADV_POPULATE_READ (Linux before 5.14) faults them in as read.
void populate_read(uint8_t* p, uint64_t bytes) {
#ifdef MADV_POPULATE_READ
    if (bytes) madvise(p, bytes, MADV_POPULATE_READ);
#else
    (void)p, (void)bytes;
#endif
}
}  // namespace

FilePages::~FilePages() {
    for (const Mapped& m : mapped_) m.die->soc().gm.store().unmap_file(m.gm, m.span);
    for (const Mapped& m : first_) m.die->gm_free(m.gm);
}

uint64_t FilePages::map(SimPlatform& die, const std::string& file, uint64_t offset, uint64_t bytes,
                        const std::string& what, Pages pages) {
    const int fd = ::open(file.c_str(), (pages == Pages::Private ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    struct stat st {};
    if (fd < 0 || fstat(fd, &st) != 0) {
        const std::string why = std::strerror(errno);
        if (fd >= 0) ::close(fd);
        throw BadInput(what + "cannot open " + file + ": " + why);
    }
    struct Close {
        int fd;
        ~Close() { ::close(fd); }  // the mapping keeps the file's pages
    } close{fd};
    const uint64_t span = (bytes + kPage - 1) / kPage * kPage;
    const uint64_t size = static_cast<uint64_t>(st.st_size);
    if (offset % kPage) {
        throw BadInput(what + "offset " + std::to_string(offset) + " in " + file +
                       " is not a multiple of 4096 (a tensor's pages are mapped into GM)");
    }
    if (offset > size || span > size - offset) {
        throw BadInput(what + std::to_string(span) + " bytes (its " + std::to_string(bytes) +
                       " rounded up to pages) at offset " + std::to_string(offset) + " lie beyond " + file + " (" +
                       std::to_string(size) + " bytes)");
    }
    const uint64_t gm = die.gm_alloc(bytes);
    bool first = true;
    for (const Mapped& m : first_) first = first && m.die != &die;
    if (first) first_.push_back({&die, gm, 0});
    BackingStore& store = die.soc().gm.store();
    if (pages == Pages::Private) {
        // As BackingStore::map_file does, copy-on-write: unmap_file detaches it the same way.
        if (span && mmap(store.host_base() + gm, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_FIXED, fd,
                         static_cast<off_t>(offset)) == MAP_FAILED) {
            const std::string why = std::strerror(errno);
            store.unmap_file(gm, span);  // a failed MAP_FIXED may have left the range unmapped
            throw rt::RuntimeError(what + "cannot map " + std::to_string(span) + " bytes of " + file +
                                   " privately into simulated memory: " + why);
        }
        populate_read(store.host_base() + gm, span);
    } else {
        try {
            store.map_file(gm, span, fd, offset);
        } catch (const std::runtime_error& e) {
            throw rt::RuntimeError(what + e.what());
        }
    }
    mapped_.push_back({&die, gm, span});
    return gm;
}

}  // namespace pfsim::api

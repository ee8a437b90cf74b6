// Large host byte buffers (a tensor's values, its golden) that the host backs
// with huge pages where it allows them per range (THP "madvise"): filling one
// then faults once per 2 MiB instead of once per 4 KiB, which on virtual
// machines is most of the cost of making a large input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace pfsim {

// `bytes` zero bytes; the storage is advised for huge pages before it is first
// touched, and a large one is first touched on every host thread. Advice only:
// where the host refuses it, an ordinary buffer.
std::vector<uint8_t> host_buffer(size_t bytes);

// A copy of `data` made the same way.
std::vector<uint8_t> host_buffer_copy(const std::vector<uint8_t>& data);

// Advises the whole host huge pages (2 MiB, 2 MiB-aligned) inside
// [p, p + bytes) for transparent huge pages; nothing when none fits. Advice
// only: a host that refuses it keeps its base pages.
void advise_huge_pages(void* p, size_t bytes);

// memcpy(dst, src, bytes), on every host thread for a large copy (the
// destination's first touch is then faulted in parallel too). The ranges must
// not overlap.
void parallel_copy(void* dst, const void* src, size_t bytes);

}  // namespace pfsim

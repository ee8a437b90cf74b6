// What the runtime's kernel-side code needs from the core it runs on. One side
// of the platform seam: runtime/ sees only this and platform.h; a platform
// binding (runtime/platform/sim, or an onboard one) implements both.
#pragma once

#include <cstdint>
#include <string>

#include "runtime/platform/channel_groups.h"

namespace pfsim::rt {

struct KernelSide;  // runtime/prefetch.h

class Device {
public:
    virtual ~Device() = default;

    virtual bool is_vector_core() const = 0;
    virtual uint32_t block_idx() const = 0;  // hardware block index (the cluster, for a vector core)
    virtual uint32_t core_id() const = 0;
    virtual int64_t* kernel_args() const = 0;  // the args the running kernel was launched with
    // The GM address a kernel's device pointer points at; 0 when it points
    // outside GM.
    virtual uint64_t gm_address(const void* p) const = 0;

    // Control data to and from GM: UB <-> GM copies on the uncached path.
    virtual void gm_write(uint64_t addr, const void* src, uint64_t bytes) = 0;
    virtual void gm_read(uint64_t addr, void* dst, uint64_t bytes) = 0;
    virtual void mmio_write32(uint64_t addr, uint32_t value) = 0;
    // Clean and invalidate the whole data cache (dcci ENTIRE_DATA_CACHE), then a
    // data barrier.
    virtual void flush() = 0;
    // Clean and invalidate the one data-cache line holding GM address `addr`
    // (dcci SINGLE_CACHE_LINE), then a data barrier.
    virtual void flush_line(uint64_t addr) = 0;
    // Scalar time to build one 64-byte SDMA request.
    virtual void build_request() = 0;
    // Scalar work of `ps` picoseconds.
    virtual void spend(uint64_t ps) = 0;
    virtual uint64_t now_ps() = 0;
    // Trace hooks: a post of [addr, addr + bytes) that took [since, now); a wait
    // on it (flow 0: waiting for a flag slot to retire) that took [since, now).
    virtual void note_prefetch_post(uint64_t since_ps, uint64_t flow, uint64_t addr, uint64_t bytes) = 0;
    // `polls`: the post-done record reads the wait made.
    virtual void note_prefetch_wait(uint64_t since_ps, uint64_t flow, bool done, uint64_t polls) = 0;
    virtual void warn(const std::string& message) = 0;
    // "file:line" of the kernel's source that made the runtime call being
    // served ("" when it cannot be told).
    virtual std::string caller_site() = 0;
    // What-if: [addr, addr + bytes) resident in L2 now, at no cost.
    virtual void make_resident(uint64_t addr, uint64_t bytes) = 0;
    // Checker side channel: GM as it is now, at no cost in time or counts.
    virtual void peek(uint64_t addr, void* dst, uint64_t bytes) = 0;
    virtual void report_violation(const std::string& message) = 0;
    // The channel groups' posters of the die the calling core belongs to.
    virtual ChannelGroups& channel_groups() = 0;
    // The kernel side's state (options, observers, what-if counts) of the die
    // the calling core belongs to. Costs no time and has no effect on the core.
    virtual KernelSide& kernel_side() = 0;
};

// The device the calling kernel runs on (provided by the platform binding).
Device& current_device();

}  // namespace pfsim::rt

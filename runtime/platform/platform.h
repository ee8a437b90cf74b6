// What the runtime's host side needs from a platform: GM, SDMA queues, launches.
// The other side of the platform seam (see device.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pfsim::rt {

using KernelEntry = void (*)(int64_t* args);

// What a launch runs: one entry for its vector cores, one for its cube cores
// (a kernel source is built once per core type).
struct KernelEntries {
    KernelEntry aiv = nullptr;
    KernelEntry aic = nullptr;
};

// One SDMA submission queue, as the driver creates it ("a STARS stream").
struct SdmaQueue {
    uint64_t ring_base = 0;      // GM address of the ring
    uint64_t doorbell_base = 0;  // MMIO address of the queue's register block
    uint32_t depth = 0;
    uint32_t sq_id = 0;
    uint32_t stream_id = 0;
};

// Which cores a launch runs on: `block_dim` clusters; in each, the cube core
// and/or `vector_per_block` (1 or 2) vector cores.
struct LaunchSpec {
    uint32_t block_dim = 1;
    uint32_t vector_per_block = 1;
    bool cube = false;
};

// Where the i-th core of a launch sits: clusters in order; in each, the cube
// core first (when the launch has one), then its vector cores.
struct CorePlace {
    bool vector;
    uint32_t block_idx;
    uint32_t subblock;
};
std::vector<CorePlace> core_places(const LaunchSpec& spec);

struct CoreTiming {
    uint32_t core_id = 0;
    bool vector = true;
    uint32_t block_idx = 0;
    uint32_t subblock = 0;
    uint64_t entered_ps = 0;
    uint64_t returned_ps = 0;
    std::string error;  // what the kernel raised on this core, if anything
    std::vector<std::string> violations;  // protocol-checker findings on this core
};

struct LaunchResult {
    std::vector<CoreTiming> cores;
    uint64_t kernel_time_ps = 0;  // first core entering to last core returning
    std::vector<std::string> warnings;
    bool ok() const;
    std::string first_error() const;
};

class Platform {
public:
    virtual ~Platform() = default;
    virtual std::string platform_name() const = 0;

    // GM for the host: allocation and copies (host <-> device memcpy).
    virtual uint64_t gm_alloc(uint64_t bytes) = 0;  // throws std::runtime_error when GM is full
    virtual void gm_free(uint64_t addr) = 0;
    virtual void gm_write(uint64_t addr, const void* src, uint64_t bytes) = 0;
    virtual void gm_read(uint64_t addr, void* dst, uint64_t bytes) = 0;
    // The pointer a kernel dereferences to reach GM address `addr` (what goes
    // into ChipTensor.buffer.addr and the contexts).
    virtual uint64_t device_pointer(uint64_t addr) const = 0;

    // The async-DMA workspace provider: supported kinds (bit mask), channel count,
    // and the queues themselves. A platform without a provider supports mask 0.
    virtual uint32_t dma_workspace_supported_mask() const = 0;
    virtual uint32_t dma_channel_count() const = 0;
    virtual uint32_t doorbell_tail_offset() const = 0;
    virtual SdmaQueue create_sdma_queue(uint32_t index) = 0;
    virtual void destroy_sdma_queue(uint32_t index) = 0;
    virtual uint32_t live_sdma_queues() const = 0;

    // Runs `entries` on the cores of `spec`, core i with args_per_core[i] (in
    // the order clusters, then cube before vector cores), and waits for all of
    // them. Throws std::runtime_error when an entry the cores need is missing.
    virtual LaunchResult launch(const KernelEntries& entries, const LaunchSpec& spec,
                                const std::vector<int64_t*>& args_per_core) = 0;
    virtual uint64_t now_ps() const = 0;
};

}  // namespace pfsim::rt

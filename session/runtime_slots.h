// simpler's runtime slots on one die (its pipeline depth: 2), as the device
// keeps them. Every device call runs through one (slot 0 unless a lease names
// another). A slot has a staging buffer in the device's host memory, where the
// call's argument record is built (its tensors' descriptors, then its
// scalars), and a retained buffer in GM the record is copied into for the
// AICPU: reserved at the slot's first call (SimPlatform::gm_reserve, outside
// what runs allocate), kept across calls, replaced by a larger one when a
// record outgrows it. The orchestration gets the record as read back from that
// GM. The copies are the host's setup of a call: no simulated time, no counter.
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "runtime/kernel_abi.h"
#include "runtime/platform/sim/sim_platform.h"

namespace pfsim::api {

class RuntimeSlots {
public:
    static constexpr int kDepth = 2;

    explicit RuntimeSlots(SimPlatform& die);

    // simpler's pipeline lease: `slot` below kDepth, `generation` non-zero and
    // not below the highest the slot was leased with (which it becomes).
    // Throws BadInput naming what is wrong; nothing changes then.
    void lease(int slot, uint64_t generation);
    // Passes a call's record through `slot` (see above), leaving in `tensors`
    // and `scalars` what the retained GM holds. Throws BadInput for a slot out
    // of range, std::runtime_error when GM cannot hold the record.
    void stage(int slot, std::vector<rt::ChipTensor>& tensors, std::vector<uint64_t>& scalars);

    // The slot's staging buffer (a host address of the device process).
    uint64_t staging_address(int slot) const;
    // The slot's retained buffer as the AICPU addresses it; 0 before its first call.
    uint64_t retained_address(int slot) const;
    uint64_t retained_bytes(int slot) const;
    uint64_t generation(int slot) const;
    uint64_t calls(int slot) const;
    // What the slot's retained GM holds now (nothing before its first call).
    void read_retained(int slot, std::vector<rt::ChipTensor>& tensors, std::vector<uint64_t>& scalars) const;

private:
    struct Slot {
        std::vector<uint8_t> staging;
        uint64_t retained_gm = 0, retained_bytes = 0;
        uint64_t generation = 0, calls = 0;
    };
    const Slot& at(int slot) const;
    SimPlatform& die_;
    std::array<Slot, kDepth> slots_;
};

}  // namespace pfsim::api

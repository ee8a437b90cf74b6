#include "session/runtime_slots.h"

#include <cstring>
#include <string>
#include <type_traits>

#include "session/request.h"

namespace pfsim::api {

namespace {

static_assert(std::is_trivially_copyable_v<rt::ChipTensor>, "a record holds descriptors as bytes");

// A record: the counts, then the descriptors (each at its alignment), then the scalars.
struct Header {
    uint32_t tensors, scalars;
};
constexpr uint64_t kTensorsAt = alignof(rt::ChipTensor) > sizeof(Header) ? alignof(rt::ChipTensor) : sizeof(Header);
// The staging buffers' first size: room for 64 tensors and 64 scalars, so their
// addresses are the device's from its start.
constexpr uint64_t kInitialStaging = kTensorsAt + 64 * sizeof(rt::ChipTensor) + 64 * sizeof(uint64_t);

uint64_t record_bytes(uint64_t tensors, uint64_t scalars) {
    return kTensorsAt + tensors * sizeof(rt::ChipTensor) + scalars * sizeof(uint64_t);
}

}  // namespace

RuntimeSlots::RuntimeSlots(SimPlatform& die) : die_(die) {
    for (Slot& s : slots_) s.staging.resize(kInitialStaging);
}

const RuntimeSlots::Slot& RuntimeSlots::at(int slot) const {
    if (slot < 0 || slot >= kDepth) {
        throw BadInput("runtime slot " + std::to_string(slot) + ": the device has slots 0 to " +
                       std::to_string(kDepth - 1) + " (pipeline depth " + std::to_string(kDepth) + ")");
    }
    return slots_[slot];
}

void RuntimeSlots::lease(int slot, uint64_t generation) {
    const Slot& s = at(slot);
    if (generation == 0) throw BadInput("runtime slot " + std::to_string(slot) + ": a lease's generation is never 0");
    if (generation < s.generation) {
        throw BadInput("runtime slot " + std::to_string(slot) + ": lease generation " + std::to_string(generation) +
                       " is stale (the slot was leased with " + std::to_string(s.generation) + ")");
    }
    slots_[slot].generation = generation;
}

void RuntimeSlots::stage(int slot, std::vector<rt::ChipTensor>& tensors, std::vector<uint64_t>& scalars) {
    at(slot);
    Slot& s = slots_[slot];
    const uint64_t bytes = record_bytes(tensors.size(), scalars.size());
    if (s.staging.size() < bytes) s.staging.resize(bytes);
    const Header header{static_cast<uint32_t>(tensors.size()), static_cast<uint32_t>(scalars.size())};
    std::memcpy(s.staging.data(), &header, sizeof header);
    if (!tensors.empty()) std::memcpy(s.staging.data() + kTensorsAt, tensors.data(), tensors.size() * sizeof(rt::ChipTensor));
    if (!scalars.empty()) {
        std::memcpy(s.staging.data() + record_bytes(tensors.size(), 0), scalars.data(), scalars.size() * sizeof(uint64_t));
    }
    if (s.retained_bytes < bytes) {  // the old buffer stays reserved: GM's reservations only grow
        s.retained_gm = die_.gm_reserve(bytes);
        s.retained_bytes = (bytes + SimPlatform::kAllocAlign - 1) / SimPlatform::kAllocAlign * SimPlatform::kAllocAlign;
    }
    std::memcpy(reinterpret_cast<void*>(die_.device_pointer(s.retained_gm)), s.staging.data(), bytes);
    ++s.calls;
    read_retained(slot, tensors, scalars);
}

void RuntimeSlots::read_retained(int slot, std::vector<rt::ChipTensor>& tensors, std::vector<uint64_t>& scalars) const {
    const Slot& s = at(slot);
    tensors.clear();
    scalars.clear();
    if (!s.retained_gm) return;
    const auto* gm = reinterpret_cast<const uint8_t*>(die_.device_pointer(s.retained_gm));
    Header header;
    std::memcpy(&header, gm, sizeof header);
    tensors.resize(header.tensors);
    scalars.resize(header.scalars);
    if (header.tensors) std::memcpy(tensors.data(), gm + kTensorsAt, header.tensors * sizeof(rt::ChipTensor));
    if (header.scalars) std::memcpy(scalars.data(), gm + record_bytes(header.tensors, 0), header.scalars * sizeof(uint64_t));
}

uint64_t RuntimeSlots::staging_address(int slot) const {
    return reinterpret_cast<uint64_t>(at(slot).staging.data());
}

uint64_t RuntimeSlots::retained_address(int slot) const {
    const Slot& s = at(slot);
    return s.retained_gm ? die_.device_pointer(s.retained_gm) : 0;
}

uint64_t RuntimeSlots::retained_bytes(int slot) const { return at(slot).retained_bytes; }
uint64_t RuntimeSlots::generation(int slot) const { return at(slot).generation; }
uint64_t RuntimeSlots::calls(int slot) const { return at(slot).calls; }

}  // namespace pfsim::api

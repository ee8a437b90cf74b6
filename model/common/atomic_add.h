// The read-modify-write a store with AtomicType::AtomicAdd asks of the L2:
// each destination element becomes destination + source, in the element's
// type (the six types a2a3's atomic store supports). Half and bfloat16 add in
// float and round to nearest even; integers wrap.
#pragma once

#include <cstdint>
#include <cstring>

#include <tlm>

#include "pfsim_kernel_abi.h"

namespace pfsim {

// On a cached-path write: add the payload's elements to the line's instead of
// overwriting them.
struct AtomicAddExtension : tlm::tlm_extension<AtomicAddExtension> {
    AtomicElement element = AtomicElement::F32;
    tlm::tlm_extension_base* clone() const override { return new AtomicAddExtension(*this); }
    void copy_from(const tlm::tlm_extension_base& other) override {
        element = static_cast<const AtomicAddExtension&>(other).element;
    }
};

// dst[i] += src[i] over `bytes` (a whole number of elements).
void atomic_add(AtomicElement element, uint8_t* dst, const uint8_t* src, uint64_t bytes);

// The element size of `element`, in bytes.
uint64_t atomic_element_bytes(AtomicElement element);

}  // namespace pfsim

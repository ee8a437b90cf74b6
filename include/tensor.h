// pfsim's "tensor.h": simpler's tensor descriptor and its enums, as kernels
// and orchestrations find them (layout in runtime/kernel_abi.h).
#pragma once

#include <cstdint>

#include "runtime/kernel_abi.h"

// In a kernel build, the CCE builtins (dcci, dsb) as on the board.
#if defined(__DAV_VEC__) || defined(__DAV_CUBE__)
#include "pfsim_cce_builtins.h"
#endif

using pfsim::rt::ChipTensor;
using pfsim::rt::DataType;
using pfsim::rt::MAX_TENSOR_DIMS;
using pfsim::rt::PTO2TaskId;
using pfsim::rt::PTOBufferHandle;
using pfsim::rt::TensorArgType;
// Their names after the pinned commit (simpler-compat.md §6).
using TaskId = PTO2TaskId;
using TaskTensor = ChipTensor;

inline uint64_t get_element_size(DataType t) { return pfsim::rt::element_size(t); }

// A contiguous tensor over memory the caller allocated (a device pointer).
inline ChipTensor make_tensor_external(void* addr, const uint32_t shapes[], uint32_t ndims,
                                       DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                       int32_t version = 0) {
    ChipTensor t = pfsim::rt::contiguous_tensor(reinterpret_cast<uintptr_t>(addr), dtype, shapes, ndims);
    t.manual_dep = manual_dep;
    t.version = version;
    return t;
}

// A possibly strided tensor over memory the caller allocated: element
// (i0..in) at addr + sum(i_k * strides[k]) elements.
inline ChipTensor make_tensor_strided(void* addr, const uint32_t shapes[], const uint32_t strides[], uint32_t ndims,
                                      DataType dtype = DataType::FLOAT32, bool manual_dep = false,
                                      int32_t version = 0) {
    ChipTensor t = make_tensor_external(addr, shapes, ndims, dtype, manual_dep, version);
    for (uint32_t k = 0; k < ndims; ++k) t.strides[k] = strides[k];
    t = t.derived(manual_dep);
    t.buffer.size = t.extent_elem_cache * pfsim::rt::element_size(dtype);
    return t;
}

// Scalars travel in args as raw 64-bit words: floats as their f32 bits.
template <typename T>
inline uint64_t to_u64(T v) {
    static_assert(sizeof(T) <= 8, "a scalar argument is at most 64 bits");
    uint64_t out = 0;
    __builtin_memcpy(&out, &v, sizeof(T));
    return out;
}
template <typename T>
inline T from_u64(uint64_t v) {
    static_assert(sizeof(T) <= 8, "a scalar argument is at most 64 bits");
    T out;
    __builtin_memcpy(&out, &v, sizeof(T));
    return out;
}

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

inline uint64_t get_element_size(DataType t) { return pfsim::rt::element_size(t); }

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

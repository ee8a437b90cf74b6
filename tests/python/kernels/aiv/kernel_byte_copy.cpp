// Copies its input tensor's bytes to its output through __gm__ pointers, one
// scalar load and store per byte: the same for every dtype. args[2] (a
// scalar) > 0 makes it spin that many extra scalar operations first (a long
// run, for the tests that stop one midway).
#include <cstdint>

#include <pto/pto-inst.hpp>

#include "tensor.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    for (int64_t i = 0; i < args[2]; ++i) get_sys_cnt();
    __gm__ uint8_t* src = reinterpret_cast<__gm__ uint8_t*>(in->buffer.addr);
    __gm__ uint8_t* dst = reinterpret_cast<__gm__ uint8_t*>(out->buffer.addr);
    const uint64_t bytes = in->nbytes();
    for (uint64_t i = 0; i < bytes; ++i) dst[i] = src[i];
}

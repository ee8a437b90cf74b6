// The attention step's shape: a block of kM query rows against kN keys of
// width kD; and the device pointer of a task argument's tensor.
#pragma once

#include <cstdint>

#include "tensor.h"

constexpr int kM = 16, kD = 64, kN = 512;

template <typename T>
inline __gm__ T* tensor_data(__gm__ int64_t* args, int i) {
    return reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr);
}

// args: 0 input, 1 output (ChipTensors): output = input + 1.
#include "scene.h"

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    scene::add_one(scene::data_of(reinterpret_cast<__gm__ ChipTensor*>(args[0])),
                   scene::data_of(reinterpret_cast<__gm__ ChipTensor*>(args[1])));
}

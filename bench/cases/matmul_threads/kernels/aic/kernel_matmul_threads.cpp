// args[1] (shape) picks an M x K x N product, args[2] how many times it runs; the
// operands are L0A's and L0B's zeros, the result stays in L0C; `out` is not written.
#include <cstdint>
#include <pto/pto-inst.hpp>

using namespace pto;

template <typename T, int M, int K, int N>
void products(int64_t reps) {
    TileLeft<T, M, K> a;
    TileRight<T, K, N> b;
    TileAcc<float, M, N> c;
    TASSIGN(a, 0);
    TASSIGN(b, 0);
    TASSIGN(c, 0);
    for (int64_t i = 0; i < reps; ++i) TMATMUL(c, a, b);
}

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    const int64_t reps = args[2];
    switch (args[1]) {
        case 0: products<bfloat16_t, 16, 128, 128>(reps); break;
        case 1: products<float, 16, 64, 64>(reps); break;
        case 2: products<float, 32, 64, 64>(reps); break;
        case 3: products<float, 32, 64, 128>(reps); break;
        case 4: products<float, 64, 64, 128>(reps); break;
        case 5: products<float, 128, 128, 128>(reps); break;
        default: break;
    }
}

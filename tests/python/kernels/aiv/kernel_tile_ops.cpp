// One vector instruction, chosen by args[8], over R x C tiles of an element
// type T: "tile_ops_type.h" (written by the test) defines R, C and
// TILE_TYPES(X), one X(index, T) each, so that one build serves them all.
//   inputs  a, b (R x C), vr (R values, one per row), vc (C values, one per column)
//   outputs y (R x C), yr (one per row), yc (one per column)
//   args[9]: the scalar operand, as float32 bits; args[10]: the type's index
// Ops 70..75 and 80..85 (float only): TADD..TMIN (op % 10) into a y that lies
// over a's bytes (70..) or b's (80..), overlapping(); ops 90..93 (float only):
// one-operand instructions over a's bytes, overlapping_one_operand().
#include <cstdint>
#include <cstring>
#include <pto/pto-inst.hpp>

#include "tensor.h"
#include "tile_ops_type.h"

using namespace pto;

#include "pipe_sync.h"

template <typename T>
struct Ops {
    using Full = Tile<TileType::Vec, T, R, C>;
    using PerRow = Tile<TileType::Vec, T, R, 1, BLayout::ColMajor>;
    using PerCol = Tile<TileType::Vec, T, 1, C>;
    using FullGM = GlobalTensor<T, Shape<1, 1, 1, R, C>, Stride<1, 1, 1, C, 1>>;
    template <int N>
    using FlatGM = GlobalTensor<T, Shape<1, 1, 1, 1, N>, Stride<1, 1, 1, 1, 1>>;

    template <typename G>
    static G at(__gm__ int64_t* args, int i) {
        return G(reinterpret_cast<__gm__ T*>(reinterpret_cast<__gm__ ChipTensor*>(args[i])->buffer.addr));
    }

    // Ops 0..5: y = a OP b (TDIV on floats only); false for any other op.
    template <typename Y>
    static bool binary(int64_t op, Y& y, Full& a, Full& b) {
        switch (op) {
            case 0: TADD(y, a, b); return true;
            case 1: TSUB(y, a, b); return true;
            case 2: TMUL(y, a, b); return true;
            case 3:
                if constexpr (std::is_integral_v<T>) {
                    return false;
                } else {
                    TDIV(y, a, b);
                    return true;
                }
            case 4: TMAX(y, a, b); return true;
            case 5: TMIN(y, a, b); return true;
            default: return false;
        }
    }

    // y's rows are two elements longer than the operand's it lies on: y(r, c) is
    // that operand's (r, c + 2r), so from row 1 on an element's result lands on
    // an element of its row read after it. The other operand lies apart.
    static void overlapping(__gm__ int64_t* args, int64_t op, bool over_b) {
        using Wide = Tile<TileType::Vec, T, R, C + 2, BLayout::RowMajor, R, C>;
        Full a, b;
        Wide y;
        TASSIGN(y, 0);
        TASSIGN(over_b ? b : a, 0);
        TASSIGN(over_b ? a : b, (Wide::kBytes + 31) / 32 * 32);
        TLOAD(a, at<FullGM>(args, 0));
        TLOAD(b, at<FullGM>(args, 1));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        binary(op, y, a, b);
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(at<FullGM>(args, 4), y);
        pipe_sync();
    }

    // Ops 90..92: TADDS(y, a, 1.75), TNEG(y, a), TROWEXPANDMUL(y, a, vr) into a y
    // over a's bytes as overlapping() lays it; op 93: TROWSUM(yr, a) with yr on
    // a's row 1, which row 0's sum overwrites before row 1 is read.
    static void overlapping_one_operand(__gm__ int64_t* args, int64_t op) {
        using Wide = Tile<TileType::Vec, T, R, C + 2, BLayout::RowMajor, R, C>;
        Full a;
        Wide y;
        PerRow vr, yr;
        TASSIGN(y, 0);
        TASSIGN(a, 0);
        TASSIGN(yr, C * sizeof(T));
        TASSIGN(vr, (Wide::kBytes + 31) / 32 * 32);
        TLOAD(a, at<FullGM>(args, 0));
        TLOAD(vr, at<FlatGM<R>>(args, 2));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        switch (op) {
            case 90: TADDS(y, a, 1.75f); break;
            case 91: TNEG(y, a); break;
            case 92: TROWEXPANDMUL(y, a, vr); break;
            default: TROWSUM(yr, a); break;
        }
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        if (op == 93) {
            TSTORE(at<FlatGM<R>>(args, 5), yr);
        } else {
            TSTORE(at<FullGM>(args, 4), y);
        }
        pipe_sync();
    }

    static void run(__gm__ int64_t* args) {
        if constexpr (std::is_same_v<T, float>) {
            if (args[8] >= 90) return overlapping_one_operand(args, args[8]);
            if (args[8] >= 70) return overlapping(args, args[8] % 10, args[8] >= 80);
        }
        Full a, b, y;
        PerRow vr, yr;
        PerCol vc, yc;
        uint64_t offset = 0;
        auto place = [&](auto& tile) {
            TASSIGN(tile, offset);
            offset += (std::remove_reference_t<decltype(tile)>::kBytes + 31) / 32 * 32;
        };
        place(a), place(b), place(y), place(vr), place(yr), place(vc), place(yc);
        TLOAD(a, at<FullGM>(args, 0));
        TLOAD(b, at<FullGM>(args, 1));
        TLOAD(vr, at<FlatGM<R>>(args, 2));
        TLOAD(vc, at<FlatGM<C>>(args, 3));
        TLOAD(y, at<FullGM>(args, 4));
        TLOAD(yr, at<FlatGM<R>>(args, 5));
        TLOAD(yc, at<FlatGM<C>>(args, 6));
        set_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        wait_flag(PIPE_MTE2, PIPE_V, EVENT_ID0);
        const int64_t op = args[8];
        float sf;
        const uint32_t bits = static_cast<uint32_t>(args[9]);
        std::memcpy(&sf, &bits, 4);
        const T s = static_cast<T>(sf);
        constexpr bool kFloat = !std::is_integral_v<T>;
        switch (binary(op, y, a, b) ? -1 : op) {  // -1: done
            case 10: TADDS(y, a, s); break;
            case 11: TSUBS(y, a, s); break;
            case 12: TMULS(y, a, s); break;
            case 14: TMAXS(y, a, s); break;
            case 15: TMINS(y, a, s); break;
            case 25: TABS(y, a); break;
            case 26: TNEG(y, a); break;
            case 27: TRELU(y, a); break;
            case 30: TEXPANDS(y, s); break;
            case 31: TMOV(y, a); break;
            case 40: TROWSUM(yr, a, y); break;  // the board's form, with a scratch tile
            case 41: TROWMAX(yr, a, y); break;
            case 42: TROWMIN(yr, a, y); break;
            case 45: TCOLSUM(yc, a); break;
            case 46: TCOLMAX(yc, a); break;
            case 47: TCOLMIN(yc, a); break;
            case 50: TROWEXPANDADD(y, a, vr); break;
            case 51: TROWEXPANDSUB(y, a, vr); break;
            case 52: TROWEXPANDMUL(y, a, vr); break;
            case 54: TROWEXPANDMAX(y, a, vr); break;
            case 55: TROWEXPANDMIN(y, a, vr); break;
            case 56: TROWEXPAND(y, vr); break;
            case 57: TROWEXPANDSUB(y, vr, a); break;  // the per-row operand first
            case 60: TCOLEXPANDADD(y, a, vc); break;
            case 61: TCOLEXPANDSUB(y, a, vc); break;
            case 62: TCOLEXPANDMUL(y, a, vc); break;
            case 64: TCOLEXPANDMAX(y, a, vc); break;
            case 65: TCOLEXPANDMIN(y, a, vc); break;
            case 66: TCOLEXPAND(y, vc); break;
            default:
                if constexpr (kFloat) {
                    switch (op) {
                        case 13: TDIVS(y, a, s); break;
                        case 16: TDIVS(y, s, a); break;
                        case 20: TEXP(y, a); break;
                        case 21: TLOG(y, a); break;
                        case 22: TSQRT(y, a); break;
                        case 23: TRSQRT(y, a); break;
                        case 24: TRECIP(y, a); break;
                        case 53: TROWEXPANDDIV(y, a, vr); break;
                        case 63: TCOLEXPANDDIV(y, a, vc); break;
                        default: break;
                    }
                }
        }
        set_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        wait_flag(PIPE_V, PIPE_MTE3, EVENT_ID0);
        TSTORE(at<FullGM>(args, 4), y);
        TSTORE(at<FlatGM<R>>(args, 5), yr);
        TSTORE(at<FlatGM<C>>(args, 6), yc);
        pipe_sync();
    }
};

extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    switch (args[10]) {
#define TYPE_CASE(index, T)  \
    case index:              \
        Ops<T>::run(args);   \
        break;
        TILE_TYPES(TYPE_CASE)
#undef TYPE_CASE
        default: break;  // no type of that index: the outputs stay as they were
    }
}

// The kernel API of pfsim: the names of the public PTO-ISA / simpler surface that
// prefetch kernels use, in namespace pto, executed by the simulated cores.
// A kernel written for the onboard prefetch demo compiles against this header
// with include changes only.
//
// GM pointers are addresses in simulated GM: kernels pass them around and hand
// them to the API, never dereference them (use gm_read/gm_write for scalars).
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "model/core/core_ops.h"
#include "runtime/prefetch.h"
#include "runtime/sdma_workspace.h"

#ifndef __gm__
#define __gm__
#endif
#ifndef __aicore__
#define __aicore__
#endif

// simpler's tensor descriptor, as kernels find it in args[].
struct ChipBuffer {
    uint64_t addr;
    uint64_t size;
};
struct ChipTensor {
    ChipBuffer buffer;
    int64_t start_offset;  // in elements
};

using pfsim::rt::DMA_WORKSPACE_SDMA;
using pfsim::rt::DMA_WORKSPACE_URMA;
inline void* get_dma_workspace(const int64_t* args, int kind) { return pfsim::rt::get_dma_workspace(args, kind); }

namespace pto {

// 16-bit IEEE half, stored; arithmetic converts to float.
struct half {
    uint16_t bits = 0;
    half() = default;
    half(float f);  // NOLINT: implicit like the device type
    operator float() const;
};

template <int... Dims>
struct Shape {
    static constexpr int rank = sizeof...(Dims);
    static constexpr int64_t dims[rank] = {Dims...};
    static constexpr int64_t elements() { return (int64_t{1} * ... * Dims); }
};
template <int... Strides>
struct Stride {
    static constexpr int64_t strides[sizeof...(Strides)] = {Strides...};
};

template <typename T, typename ShapeT, typename StrideT = void>
class GlobalTensor {
public:
    using element = T;
    using shape = ShapeT;
    static constexpr int64_t kElements = ShapeT::elements();
    explicit GlobalTensor(__gm__ T* data) : data_(data) {}
    __gm__ T* data() const { return data_; }
    uint64_t addr() const { return reinterpret_cast<uint64_t>(data_); }
    static constexpr uint64_t bytes() { return kElements * sizeof(T); }

private:
    __gm__ T* data_;
};

enum class TileType { Vec, Mat, Left, Right, Acc };
enum class BLayout { RowMajor, ColMajor };

template <TileType Type, typename T, int Rows, int Cols, BLayout Layout = BLayout::RowMajor>
class Tile {
public:
    using element = T;
    static constexpr int rows = Rows, cols = Cols;
    static constexpr uint64_t kBytes = uint64_t{Rows} * Cols * sizeof(T);
    static constexpr pfsim::Buffer buffer() {
        switch (Type) {
            case TileType::Vec: return pfsim::Buffer::Ub;
            case TileType::Mat: return pfsim::Buffer::L1;
            case TileType::Left: return pfsim::Buffer::L0a;
            case TileType::Right: return pfsim::Buffer::L0b;
            case TileType::Acc: return pfsim::Buffer::L0c;
        }
        return pfsim::Buffer::Ub;
    }
    void assign(uint64_t offset) {
        data_ = reinterpret_cast<T*>(pfsim::current_core().buffer(buffer(), offset, kBytes));
    }
    T* data() const {
        if (!data_) throw pfsim::KernelError("tile used before TASSIGN gave it a place in the buffer");
        return data_;
    }
    T& at(int r, int c) const { return data()[r * Cols + c]; }

private:
    T* data_ = nullptr;
};

template <typename TileT>
void TASSIGN(TileT& tile, uint64_t offset) {
    tile.assign(offset);
}

// GM -> tile (MTE2, through L2) and tile -> GM (MTE3). The tile's bytes move.
template <typename TileT, typename GlobalT>
void TLOAD(TileT& tile, const GlobalT& global) {
    static_assert(TileT::kBytes <= GlobalT::bytes(), "TLOAD: the tile is larger than the global tensor");
    pfsim::current_core().load(global.addr(), reinterpret_cast<uint8_t*>(tile.data()), TileT::kBytes);
}
template <typename GlobalT, typename TileT>
void TSTORE(const GlobalT& global, const TileT& tile) {
    static_assert(TileT::kBytes <= GlobalT::bytes(), "TSTORE: the tile is larger than the global tensor");
    pfsim::current_core().store(global.addr(), reinterpret_cast<const uint8_t*>(tile.data()), TileT::kBytes);
}

// Vector ops on tiles (element-wise and row reductions), on the vector pipe.
template <typename TileT>
void TADD(TileT& dst, const TileT& a, const TileT& b) {
    for (int i = 0; i < TileT::rows * TileT::cols; ++i) {
        dst.data()[i] = static_cast<typename TileT::element>(float(a.data()[i]) + float(b.data()[i]));
    }
    pfsim::current_core().vector(3 * TileT::kBytes);
}
template <typename TileT>
void TMUL(TileT& dst, const TileT& a, const TileT& b) {
    for (int i = 0; i < TileT::rows * TileT::cols; ++i) {
        dst.data()[i] = static_cast<typename TileT::element>(float(a.data()[i]) * float(b.data()[i]));
    }
    pfsim::current_core().vector(3 * TileT::kBytes);
}
template <typename TileT>
void TMULS(TileT& dst, const TileT& a, float s) {
    for (int i = 0; i < TileT::rows * TileT::cols; ++i) {
        dst.data()[i] = static_cast<typename TileT::element>(float(a.data()[i]) * s);
    }
    pfsim::current_core().vector(2 * TileT::kBytes);
}
// dst[r][0] = sum over c of src[r][c], accumulated in float in column order.
template <typename DstT, typename SrcT>
void TROWSUM(DstT& dst, const SrcT& src) {
    static_assert(DstT::rows == SrcT::rows, "TROWSUM: row counts differ");
    for (int r = 0; r < SrcT::rows; ++r) {
        float acc = 0;
        for (int c = 0; c < SrcT::cols; ++c) acc += float(src.at(r, c));
        dst.at(r, 0) = static_cast<typename DstT::element>(acc);
    }
    pfsim::current_core().vector(SrcT::kBytes + DstT::kBytes);
}
// Row r of dst = row r of a times b[c] (a matrix row scaled by a vector, element-wise).
template <typename DstT, typename VecT>
void TROWMUL(DstT& dst, const DstT& a, const VecT& b) {
    for (int r = 0; r < DstT::rows; ++r) {
        for (int c = 0; c < DstT::cols; ++c) {
            dst.at(r, c) = static_cast<typename DstT::element>(float(a.at(r, c)) * float(b.at(0, c)));
        }
    }
    pfsim::current_core().vector(2 * DstT::kBytes + VecT::kBytes);
}

// Cube: c (M x N, float, L0C) += a (M x K, L0A) * b (K x N, L0B).
template <typename AccT, typename LeftT, typename RightT>
void TMATMUL_ACC(AccT& c, const LeftT& a, const RightT& b) {
    static_assert(LeftT::cols == RightT::rows && AccT::rows == LeftT::rows && AccT::cols == RightT::cols,
                  "TMATMUL: shapes do not chain");
    for (int m = 0; m < AccT::rows; ++m) {
        for (int n = 0; n < AccT::cols; ++n) {
            float acc = float(c.at(m, n));
            for (int k = 0; k < LeftT::cols; ++k) acc += float(a.at(m, k)) * float(b.at(k, n));
            c.at(m, n) = acc;
        }
    }
    pfsim::current_core().cube(uint64_t{AccT::rows} * AccT::cols * LeftT::cols);
}
template <typename AccT>
void TZERO(AccT& c) {
    std::memset(c.data(), 0, AccT::kBytes);
    pfsim::current_core().vector(AccT::kBytes);
}

// Scalar GM access (through L2, as a scalar load or store would).
template <typename T>
T gm_read(__gm__ const T* p) {
    T v;
    pfsim::current_core().load(reinterpret_cast<uint64_t>(p), reinterpret_cast<uint8_t*>(&v), sizeof(T));
    pfsim::current_core().wait_flag(pfsim::Pipe::Mte2, pfsim::Pipe::Scalar, 7);
    return v;
}

// Pipes and flags.
constexpr pfsim::Pipe PIPE_S = pfsim::Pipe::Scalar;
constexpr pfsim::Pipe PIPE_MTE2 = pfsim::Pipe::Mte2;
constexpr pfsim::Pipe PIPE_MTE3 = pfsim::Pipe::Mte3;
constexpr pfsim::Pipe PIPE_V = pfsim::Pipe::Vector;
constexpr pfsim::Pipe PIPE_M = pfsim::Pipe::Cube;
constexpr pfsim::Pipe PIPE_ALL = pfsim::Pipe::All;
enum EventId { EVENT_ID0, EVENT_ID1, EVENT_ID2, EVENT_ID3, EVENT_ID4, EVENT_ID5, EVENT_ID6, EVENT_ID7 };

inline void set_flag(pfsim::Pipe src, pfsim::Pipe dst, int event) { pfsim::current_core().set_flag(src, dst, event); }
inline void wait_flag(pfsim::Pipe src, pfsim::Pipe dst, int event) {
    pfsim::current_core().wait_flag(src, dst, event);
}
inline void pipe_barrier(pfsim::Pipe) { pfsim::current_core().barrier(); }
inline uint32_t get_block_idx() { return pfsim::current_core().block_idx(); }
inline uint32_t get_block_num() { return pfsim::current_core().block_num(); }
inline uint32_t get_subblockid() { return pfsim::current_core().subblock_idx(); }

// Async prefetch (PTO style).
using pfsim::rt::PrefetchAsyncContext;
namespace comm {
using AsyncEvent = pfsim::rt::AsyncEvent;
using AsyncSession = pfsim::rt::AsyncSession;
}  // namespace comm

// The source must be a flat contiguous logical-1D GM tensor: every dimension but
// the last equal to 1, packed. Checked at compile time from the type.
template <typename GlobalT>
comm::AsyncEvent TPREFETCH_ASYNC(const GlobalT& src, PrefetchAsyncContext& ctx) {
    using S = typename GlobalT::shape;
    static_assert(S::rank >= 1, "TPREFETCH_ASYNC: a rank-0 source has no byte extent");
    static_assert([] {
        for (int i = 0; i + 1 < S::rank; ++i) {
            if (S::dims[i] != 1) return false;
        }
        return true;
    }(), "TPREFETCH_ASYNC requires a flat contiguous logical 1D GM region; reshape the tensor to [N] or [1, ..., N]");
    return pfsim::rt::prefetch_async(src.addr(), GlobalT::bytes(), ctx);
}

}  // namespace pto

// pl.prefetch style: a context bound to the hidden workspace, async_prefetch of
// a whole tensor, the session projection and wait.
namespace pl::prefetch {
using Context = pfsim::rt::PrefetchAsyncContext;
using Event = pfsim::rt::AsyncEvent;
using Session = pfsim::rt::AsyncSession;
using Tensor = pfsim::rt::TensorView;

inline Context make_context() {
    return Context(get_dma_workspace(pfsim::current_core().kernel_args(), DMA_WORKSPACE_SDMA));
}
inline Event async_prefetch(const Tensor& src, Context& ctx) {
    return pfsim::rt::prefetch_async(src.addr, pfsim::rt::flat_prefetch_bytes(src), ctx);
}
inline Session& session(Context& ctx) { return ctx.session; }
inline bool wait(const Event& evt, Session& s) { return evt.Wait(s); }
}  // namespace pl::prefetch

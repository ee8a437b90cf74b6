// TPUSH / TPOP / TFREE: the cube<->vector FIFO of one cluster, built as a2a3
// builds it -- slots in GM, handshake on the cluster's cross-core flags
// (ffts_cross_core_sync / wait_flag_dev, model/core/cross_core_flags.h).
//
// A TPipe<FlagID, Dir, SlotSize, SlotNum, LocalSlotNum> has SlotNum slots of
// SlotSize bytes at the GM address it is built with. The producer waits for a
// free slot (flag FlagID + 1, every SyncPeriod tiles once the first SlotNum
// are used), stores its tile into slot (index % SlotNum) and sets FlagID. The
// consumer waits for FlagID, loads the slot into its local slot
// (index % LocalSlotNum, SlotSize apart from the consumer buffer given at
// construction: UB for C2V, L1 for V2C) and, every SyncPeriod tiles, frees
// slots for the producer. A BOTH pipe runs V2C on FlagID + 2 / + 3 and a ring
// SlotNum * SlotSize further on. Under TILE_UP_DOWN a vector core's tile starts
// get_subblockid() tiles' rows into the slot, under TILE_LEFT_RIGHT that many
// tiles' columns; the register reads 0 as on the board (core.subblock_register),
// so a kernel places vector core 1's part by the pipe's entry offset, as board
// kernels do. The loads and stores are TLOAD and TSTORE, timed through L2
// like any other; the handshake costs core.cross_core_latency per flag.
#pragma once

#include <cstdint>
#include <exception>
#include <string>

namespace pto {

enum TileSplitAxis : uint8_t {
    TILE_NO_SPLIT = 0,
    TILE_UP_DOWN = 1,
    TILE_LEFT_RIGHT = 2,
    TILE_UP_DOWN_ODD = 3,
    TILE_LEFT_RIGHT_ODD = 4,
};
enum Direction : uint8_t { UNDEFINED = 0, DIR_C2V = 1, DIR_V2C = 2, DIR_BOTH = 3, DIR_V2C_CTRL = 4 };
enum TSyncCVMode : uint8_t { CUBE_ALL_CORE_SYNC = 0, VEC_ALL_CORE_SYNC = 0, VEC_SUBCORES_SYNC = 1, CV_CORES_SYNC = 2 };

// CCE's cross-core flags: `config` carries the mode in bits 4-5 and the flag
// in bits 8-11; the set leaves once `pipe` has finished what it was doing.
inline void ffts_cross_core_sync(pipe_t pipe, uint64_t config) { pfsim::current_core().cross_core_set(pipe, config); }
inline void wait_flag_dev(int64_t flag) { pfsim::current_core().cross_core_wait(static_cast<int>(flag)); }

template <uint8_t FlagID, uint8_t DirType, uint32_t SlotSize, uint32_t SlotNum, uint32_t LocalSlotNum = 2,
          bool IsNoSplit = false, bool EN_UNIT_FLAG = false>
struct TPipe {
    static_assert(DirType == DIR_C2V || DirType == DIR_V2C || DirType == DIR_BOTH,
                  "TPipe: pfsim models C2V, V2C and BOTH pipes (not V2C_CTRL)");
    static_assert(SlotNum >= 1 && LocalSlotNum >= 1, "TPipe: SlotNum and LocalSlotNum must be at least 1");
    static_assert(FlagID + (DirType == DIR_BOTH ? 3 : 1) < 16, "TPipe: its flags (FlagID and up) must be below 16");
    static constexpr bool is_c2v = DirType == DIR_C2V, is_v2c = DirType == DIR_V2C, is_both = DirType == DIR_BOTH;
    static constexpr uint32_t SyncPeriod = SlotNum <= 2 ? SlotNum : SlotNum / 2;
    static constexpr uint32_t kSlotSize = SlotSize, kSlotNum = SlotNum, kLocalSlotNum = LocalSlotNum;

    static bool shouldWaitFree(uint32_t index) { return index >= SlotNum && index % SyncPeriod == 0; }
    static bool shouldNotifyFree(uint32_t index) { return (index + 1) % SyncPeriod == 0; }
    static uint64_t message(int flag) { return 0x1 | (uint64_t{CV_CORES_SYNC} << 4) | (uint64_t(flag) << 8); }
    static bool on_cube() { return pfsim::current_core().core_kind() == pfsim::CoreKind::Aic; }
    // The flags of the direction this core produces in (+0 data, +1 free).
    static int produce_flag() { return is_both && !on_cube() ? FlagID + 2 : FlagID; }
    static int consume_flag() { return is_both && on_cube() ? FlagID + 2 : FlagID; }

    struct Fifo {
        __gm__ void* GM_SLOT_BUFFER;
        uint32_t C2V_CONSUMER_BUF, V2C_CONSUMER_BUF;
        static constexpr uint32_t SLOT_SIZE = SlotSize, SLOT_NUM = SlotNum, LOCAL_SLOT_NUM = LocalSlotNum;
    };
    struct Producer {
        uint32_t tileIndex = 0;
        uint32_t subTileIndex = 0;
        bool isAllocate = true, isRecord = true;
        int entryOffset = 0;
        bool entryOffsetSet = false;  // by the kernel (setEntryOffset)
        uint32_t freesWaited = 0;  // free notifications taken (what the destructor does not drain)
        void setAllocateStatus(bool b) { isAllocate = b; }
        void setRecordStatus(bool b) { isRecord = b; }
        void setTileId(int t, int sub) { tileIndex = static_cast<uint32_t>(t), subTileIndex = static_cast<uint32_t>(sub); }
        void setEntryOffset(int offset) { entryOffset = offset, entryOffsetSet = true; }
        int getTileId() const { return static_cast<int>(tileIndex); }
        int getSubTileId() const { return static_cast<int>(subTileIndex); }
        bool getAllocateStatus() const { return isAllocate; }
        bool getRecordStatus() const { return isRecord; }
        void allocate() {
            wait_flag_dev(produce_flag() + 1);
            ++freesWaited;
        }
        void record() const { ffts_cross_core_sync(on_cube() ? PIPE_FIX : PIPE_MTE3, message(produce_flag())); }
    };
    struct Consumer {
        int tileIndex = 0;
        int subTileIndex = 0;
        bool isWait = true, isFree = true;
        int entryOffset = 0;
        bool entryOffsetSet = false;  // by the kernel (setEntryOffset)
        void setTileId(int t, int sub) { tileIndex = t, subTileIndex = sub; }
        void setWaitStatus(bool b) { isWait = b; }
        void setFreeStatus(bool b) { isFree = b; }
        void setEntryOffset(int offset) { entryOffset = offset, entryOffsetSet = true; }
        int getTileId() const { return tileIndex; }
        int getSubTileId() const { return subTileIndex; }
        bool getWaitStatus() const { return isWait; }
        bool getFreeStatus() const { return isFree; }
        void wait() const { wait_flag_dev(consume_flag()); }
        void free() const { ffts_cross_core_sync(PIPE_MTE2, message(consume_flag() + 1)); }
    };

    Fifo fifo;
    Producer prod;
    Consumer cons;

    TPipe(__gm__ void* gm_slots, uint32_t c2v_consumer_buf, uint32_t v2c_consumer_buf)
        : fifo{gm_slots, c2v_consumer_buf, v2c_consumer_buf} {
        if constexpr (is_both) {  // the V2C ring follows the C2V ring
            constexpr int kV2cRing = static_cast<int>(SlotNum * SlotSize);
            if (on_cube()) {
                cons.entryOffset = kV2cRing;
            } else {
                prod.entryOffset = kV2cRing;
            }
        }
    }
    // The consumer freed every SyncPeriod tiles; the producer waited only for
    // the frees it needed. Take the rest, so that the flags are clear for the
    // next pipe on this cluster.
    ~TPipe() noexcept(false) {
        if (std::uncaught_exceptions() > 0) return;  // a failing kernel: its run is over
        const uint32_t notified = prod.tileIndex / SyncPeriod;
        while (prod.freesWaited < notified) prod.allocate();
    }
};

namespace detail {
template <typename P>
struct is_tpipe : std::false_type {};
template <uint8_t F, uint8_t D, uint32_t S, uint32_t N, uint32_t L, bool X, bool U>
struct is_tpipe<TPipe<F, D, S, N, L, X, U>> : std::true_type {};

// The GM run a core's tile occupies in the current slot: its address, rows,
// columns and GM row stride (in elements), checked against the slot.
template <typename Pipe, typename TileT, TileSplitAxis Split>
auto slot_view(const char* instruction, Pipe& pipe, const TileT& tile, uint32_t index, int entry_offset, int subblock) {
    static_assert(Split == TILE_NO_SPLIT || Split == TILE_UP_DOWN || Split == TILE_LEFT_RIGHT,
                  "TPUSH/TPOP: the _ODD split axes are not modelled");
    using T = typename TileT::DType;
    const int64_t rows = tile.GetValidRow(), cols = tile.GetValidCol();
    const bool lane = TileT::type == TileType::Vec && Split != TILE_NO_SPLIT;
    const int64_t stride = lane && Split == TILE_LEFT_RIGHT ? 2 * cols : cols;
    const int64_t lane_offset = !lane ? 0 : (Split == TILE_UP_DOWN ? subblock * rows * cols : subblock * cols);
    const int64_t last = lane_offset + (rows - 1) * stride + cols;  // one past the last element
    if (entry_offset < 0 || uint64_t(entry_offset) % sizeof(T) != 0) fail(instruction, "the pipe's entry offset is not a whole element");
    const uint64_t ring_offset = uint64_t(index % Pipe::kSlotNum) * Pipe::kSlotSize + uint64_t(entry_offset);
    if (uint64_t(last) * sizeof(T) > Pipe::kSlotSize) {
        throw pfsim::KernelError(std::string(instruction) + ": the tile (" + std::to_string(rows) + " x " +
                                 std::to_string(cols) + ", " + std::to_string(sizeof(T)) +
                                 "-byte elements, this core's part) does not fit the pipe's " +
                                 std::to_string(Pipe::kSlotSize) + "-byte slot");
    }
    auto* base = reinterpret_cast<__gm__ T*>(static_cast<__gm__ uint8_t*>(pipe.fifo.GM_SLOT_BUFFER) + ring_offset);
    using View = GlobalTensor<T, Shape<1, 1, 1, DYNAMIC, DYNAMIC>, Stride<1, 1, 1, DYNAMIC, 1>>;
    return View(base + lane_offset, Shape<1, 1, 1, DYNAMIC, DYNAMIC>(rows, cols),
                Stride<1, 1, 1, DYNAMIC, 1>(stride));
}

// A split TPUSH/TPOP on vector core 1 whose lane (`subblock`, what
// get_subblockid() gave) is the register's board reading, 0, through a pipe
// whose entry offset the kernel never set, lands on vector core 0's part of the
// slot: the mark of a kernel written against a2a3sim's register. Warned once
// per core, naming the setting.
template <TileSplitAxis Split, typename End>
void warn_if_lane_unplaced(const char* instruction, const End& end, int subblock) {
    pfsim::CoreOps& core = pfsim::current_core();
    if (Split == TILE_NO_SPLIT || subblock != 0 || end.entryOffsetSet || core.core_kind() != pfsim::CoreKind::Aiv ||
        core.subblock_idx() != 1 || core.subblock_register() != 0) {
        return;
    }
    core.warn(std::string(instruction) + " (" + (Split == TILE_UP_DOWN ? "TILE_UP_DOWN" : "TILE_LEFT_RIGHT") +
              ") on vector core 1: get_subblockid() reads 0 (core.subblock_register = zero, the board's reading) "
              "and the pipe has no entry offset, so it uses vector core 0's part of the slot; a kernel written "
              "against a2a3sim's register runs with core.subblock_register = lane");
}

template <typename Pipe, typename TileT, TileSplitAxis Split>
void push(Pipe& pipe, TileT& tile, int subblock) {
    const bool cube = Pipe::on_cube();
    if (!Pipe::is_both && cube != Pipe::is_c2v) {
        fail("TPUSH", cube ? "a V2C pipe's producer is the vector core, not the cube core"
                           : "a C2V pipe's producer is the cube core, not a vector core");
    }
    if (TileT::type != (cube ? TileType::Acc : TileType::Vec)) {
        fail("TPUSH", cube ? "the cube core pushes an accumulator (Acc) tile" : "a vector core pushes a Vec tile");
    }
    if (pipe.prod.isAllocate && Pipe::shouldWaitFree(pipe.prod.tileIndex)) pipe.prod.allocate();
    TSTORE(slot_view<Pipe, TileT, Split>("TPUSH", pipe, tile, pipe.prod.tileIndex, pipe.prod.entryOffset, subblock), tile);
    ++pipe.prod.tileIndex;
    if (pipe.prod.isRecord) pipe.prod.record();
}

template <typename Pipe, typename TileT, TileSplitAxis Split>
void pop(Pipe& pipe, TileT& tile, int subblock) {
    const bool cube = Pipe::on_cube();
    if (!Pipe::is_both && cube != Pipe::is_v2c) {
        fail("TPOP", cube ? "a C2V pipe's consumer is the vector core, not the cube core"
                          : "a V2C pipe's consumer is the cube core, not a vector core");
    }
    if (TileT::type != (cube ? TileType::Mat : TileType::Vec)) {
        fail("TPOP", cube ? "the cube core pops into a Mat (L1) tile" : "a vector core pops into a Vec tile");
    }
    if (pipe.cons.isWait) pipe.cons.wait();
    const uint32_t index = static_cast<uint32_t>(pipe.cons.tileIndex);
    const uint32_t local = cube ? pipe.fifo.V2C_CONSUMER_BUF : pipe.fifo.C2V_CONSUMER_BUF;
    TASSIGN(tile, local + uint64_t(index % Pipe::kLocalSlotNum) * Pipe::kSlotSize);
    TLOAD(tile, slot_view<Pipe, TileT, Split>("TPOP", pipe, tile, index, pipe.cons.entryOffset, subblock));
    if (pipe.cons.isFree && Pipe::shouldNotifyFree(index)) pipe.cons.free();
    ++pipe.cons.tileIndex;
}
}  // namespace detail

// Producer side: the cube core pushes an Acc tile (C2V), a vector core a Vec
// tile (V2C); `subBlockId` overrides the core's own sub-block for the lane.
template <typename Pipe, typename TileProd, TileSplitAxis Split, typename... Events>
void TPUSH(Pipe& pipe, TileProd& tile, Events&...) {
    const int subblock = static_cast<int>(get_subblockid());
    detail::warn_if_lane_unplaced<Split>("TPUSH", pipe.prod, subblock);
    detail::push<Pipe, TileProd, Split>(pipe, tile, subblock);
}
template <typename Pipe, typename TileProd, TileSplitAxis Split>
void TPUSH(Pipe& pipe, TileProd& tile, int32_t subBlockId) {
    detail::push<Pipe, TileProd, Split>(pipe, tile, subBlockId);
}
template <typename TileProd, typename Pipe, std::enable_if_t<detail::is_tpipe<Pipe>::value, int> = 0>
void TPUSH(TileProd& tile, Pipe& pipe) {
    detail::push<Pipe, TileProd, TILE_NO_SPLIT>(pipe, tile, 0);
}

// Consumer side: a vector core pops into a Vec tile (C2V), the cube core into
// a Mat tile (V2C). The tile is placed in the pipe's local slot.
template <typename Pipe, typename TileCons, TileSplitAxis Split, typename... Events>
void TPOP(Pipe& pipe, TileCons& tile, Events&...) {
    const int subblock = static_cast<int>(get_subblockid());
    detail::warn_if_lane_unplaced<Split>("TPOP", pipe.cons, subblock);
    detail::pop<Pipe, TileCons, Split>(pipe, tile, subblock);
}
template <typename Pipe, typename TileCons, TileSplitAxis Split>
void TPOP(Pipe& pipe, TileCons& tile, int32_t subBlockId) {
    detail::pop<Pipe, TileCons, Split>(pipe, tile, subBlockId);
}
template <typename TileCons, typename Pipe, std::enable_if_t<detail::is_tpipe<Pipe>::value, int> = 0>
void TPOP(TileCons& tile, Pipe& pipe) {
    detail::pop<Pipe, TileCons, TILE_NO_SPLIT>(pipe, tile, 0);
}

// On a2a3 TPOP already frees the GM slot once its load is done: TFREE of a
// tile pipe does nothing (it is there for targets whose FIFO is local).
template <typename Pipe, TileSplitAxis Split = TILE_NO_SPLIT, typename... Events>
void TFREE(Pipe&, Events&...) {
    static_assert(detail::is_tpipe<Pipe>::value, "TFREE takes a TPipe");
}

}  // namespace pto

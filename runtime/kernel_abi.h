// The structures a kernel finds through its args, laid out byte for byte as
// simpler's tensormap_and_ringbuffer runtime lays them out on a2a3 (see
// shared/docs/simpler-compat.md §1): the host side (worker, orchestrator)
// writes them, kernels read them through the onboard headers (include/).
//
// Addresses held in these structures are device pointers: what a kernel
// dereferences (Platform::device_pointer of a GM address).
#pragma once

#include <cstddef>
#include <cstdint>

namespace pfsim::rt {

// A task id: (ring << 32) | local id; all ones is invalid.
struct PTO2TaskId {
    uint64_t raw = ~uint64_t{0};
    static constexpr PTO2TaskId invalid() { return PTO2TaskId{}; }
    constexpr bool is_valid() const { return raw != ~uint64_t{0}; }
};

enum class DataType : uint8_t {
    FLOAT32 = 0,
    FLOAT16 = 1,
    INT32 = 2,
    INT16 = 3,
    INT8 = 4,
    UINT8 = 5,
    BFLOAT16 = 6,
    INT64 = 7,
    UINT64 = 8,
    UINT16 = 9,
    UINT32 = 10,
    BOOL = 11,
};
constexpr int MAX_TENSOR_DIMS = 5;
constexpr uint64_t element_size(DataType t) {
    switch (t) {
        case DataType::FLOAT32: case DataType::INT32: case DataType::UINT32: return 4;
        case DataType::FLOAT16: case DataType::INT16: case DataType::UINT16: case DataType::BFLOAT16: return 2;
        case DataType::INT8: case DataType::UINT8: case DataType::BOOL: return 1;
        case DataType::INT64: case DataType::UINT64: return 8;
    }
    return 0;
}

enum class TensorArgType : uint8_t { INPUT = 0, OUTPUT = 1, INOUT = 2, OUTPUT_EXISTING = 3, NO_DEP = 4 };

struct PTOBufferHandle {
    uint64_t addr;  // device pointer
    uint64_t size;  // bytes
};

// A tensor descriptor: element (i0..in) is at byte
// (start_offset + sum(i_k * strides[k])) * element size from buffer.addr.
struct alignas(64) ChipTensor {
    PTOBufferHandle buffer;
    PTO2TaskId owner_task_id;
    uint64_t start_offset;  // elements
    int32_t version;
    uint32_t ndims;
    DataType dtype;
    bool manual_dep;
    bool is_contiguous;
    uint8_t address_space;  // 0 host, 1 device
    uint32_t shapes[MAX_TENSOR_DIMS];
    uint64_t extent_elem_cache;
    uint32_t strides[MAX_TENSOR_DIMS];  // elements

    uint64_t numel() const {
        uint64_t n = 1;
        for (uint32_t i = 0; i < ndims; ++i) n *= shapes[i];
        return n;
    }
    // Elements from the first to one past the last that the tensor spans.
    uint64_t extent_elem() const {
        uint64_t last = 0;
        for (uint32_t i = 0; i < ndims; ++i) {
            if (shapes[i] == 0) return 0;
            last += uint64_t{shapes[i] - 1} * strides[i];
        }
        return last + 1;
    }
    uint64_t nbytes() const { return numel() * element_size(dtype); }
    // This tensor tracked as `manual`, its extent and contiguity recomputed.
    ChipTensor derived(bool manual) const {
        ChipTensor t = *this;
        t.manual_dep = manual;
        t.extent_elem_cache = t.extent_elem();
        uint64_t stride = 1;
        t.is_contiguous = true;
        for (int k = static_cast<int>(ndims) - 1; k >= 0; --k) {
            t.is_contiguous &= shapes[k] == 1 || strides[k] == stride;
            stride *= shapes[k];
        }
        return t;
    }
    // The buffer's base as a T* (buffer.addr; start_offset is not applied).
    template <typename T>
    T* data_as() const {
        return reinterpret_cast<T*>(static_cast<uintptr_t>(buffer.addr));
    }
    // The sub-tensor of `view_shapes` starting at `offsets` (per dimension),
    // tracked as `manual_dep`. A view with a zero-sized dimension is empty:
    // its offsets are not applied. Bounds are the caller's contract.
    ChipTensor view(const uint32_t* view_shapes, const uint32_t* offsets, bool manual = false) const {
        ChipTensor v = *this;
        bool empty = false;
        for (uint32_t i = 0; i < ndims; ++i) empty |= view_shapes[i] == 0;
        for (uint32_t i = 0; i < ndims; ++i) {
            if (!empty) v.start_offset += uint64_t{offsets[i]} * strides[i];
            v.shapes[i] = view_shapes[i];
        }
        v.manual_dep = manual;
        v.extent_elem_cache = v.extent_elem();
        v.is_contiguous = empty || v.extent_elem_cache == v.numel();
        return v;
    }
    // Dimensions x and y swapped.
    ChipTensor transpose(uint32_t x, uint32_t y, bool manual = false) const {
        ChipTensor t = *this;
        if (x < ndims && y < ndims) {
            t.shapes[x] = shapes[y], t.shapes[y] = shapes[x];
            t.strides[x] = strides[y], t.strides[y] = strides[x];
        }
        return t.derived(manual);
    }
    // Dimension i of the result is dimension order[i] of this tensor.
    ChipTensor permute(const uint32_t* order, bool manual = false) const {
        ChipTensor t = *this;
        for (uint32_t i = 0; i < ndims; ++i) {
            t.shapes[i] = shapes[order[i] < ndims ? order[i] : i];
            t.strides[i] = strides[order[i] < ndims ? order[i] : i];
        }
        return t.derived(manual);
    }
    // Elements [start, end) of dimension `dim`, every `step`-th.
    ChipTensor slice(uint32_t dim, uint32_t start, uint32_t end, uint32_t step = 1, bool manual = false) const {
        ChipTensor t = *this;
        if (dim < ndims && step > 0 && start < end) {
            t.start_offset += uint64_t{start} * strides[dim];
            t.shapes[dim] = (end - start + step - 1) / step;
            t.strides[dim] = strides[dim] * step;
        }
        return t.derived(manual);
    }
    // The same elements as `new_ndims` row-major dimensions. Only a contiguous
    // tensor of the same element count can be reshaped: otherwise the result
    // has ndims 0, which every use of it refuses (the orchestration API names it).
    ChipTensor reshape(const uint32_t* new_shapes, uint32_t new_ndims, bool manual = false) const {
        ChipTensor r = *this;
        uint64_t count = 1;
        for (uint32_t i = 0; i < new_ndims; ++i) count *= new_shapes[i];
        r.manual_dep = manual;
        if (!is_contiguous || count != numel() || new_ndims == 0 || new_ndims > MAX_TENSOR_DIMS) {
            r.ndims = 0;
            return r;
        }
        r.ndims = new_ndims;
        uint32_t stride = 1;
        for (int k = static_cast<int>(new_ndims) - 1; k >= 0; --k) {
            r.shapes[k] = new_shapes[k];
            r.strides[k] = stride;
            stride *= new_shapes[k];
        }
        for (uint32_t k = new_ndims; k < MAX_TENSOR_DIMS; ++k) r.shapes[k] = r.strides[k] = 0;
        r.extent_elem_cache = count;
        r.is_contiguous = true;
        return r;
    }
};
static_assert(sizeof(ChipTensor) == 128, "ChipTensor is 128 bytes");

// A packed row-major tensor of `ndims` dimensions at `device_pointer`, on the
// device, owned by no task.
inline ChipTensor contiguous_tensor(uint64_t device_pointer, DataType dtype, const uint32_t* shapes, uint32_t ndims) {
    ChipTensor t{};
    t.owner_task_id = PTO2TaskId::invalid();
    t.ndims = ndims;
    t.dtype = dtype;
    t.is_contiguous = true;
    t.address_space = 1;
    uint32_t stride = 1;
    for (int k = static_cast<int>(ndims) - 1; k >= 0; --k) {
        t.shapes[k] = shapes[k];
        t.strides[k] = stride;
        stride *= shapes[k];
    }
    t.extent_elem_cache = t.numel();
    t.buffer = {device_pointer, t.nbytes()};
    return t;
}
static_assert(offsetof(ChipTensor, owner_task_id) == 16 && offsetof(ChipTensor, start_offset) == 24 &&
                  offsetof(ChipTensor, version) == 32 && offsetof(ChipTensor, ndims) == 36 &&
                  offsetof(ChipTensor, dtype) == 40 && offsetof(ChipTensor, address_space) == 43 &&
                  offsetof(ChipTensor, shapes) == 44 && offsetof(ChipTensor, extent_elem_cache) == 64 &&
                  offsetof(ChipTensor, strides) == 72,
              "ChipTensor field offsets follow simpler's");

// Deferred completion (protocol §3.5): a kernel appends conditions to its
// task's slab; the scheduler completes the task once every one is met.
constexpr uint32_t MAX_COMPLETIONS_PER_TASK = 64;
constexpr uint32_t COMPLETION_ENGINE_SDMA = 0;
constexpr int32_t COMPLETION_TYPE_COUNTER = 0;
constexpr int32_t COMPLETION_TYPE_SDMA_EVENT_RECORD = 1;

struct DeferredCompletionEntry {
    uint64_t addr;
    uint64_t backend_cookie;
    uint32_t expected_value;
    uint32_t engine;
    int32_t completion_type;
    uint32_t _pad;
};
static_assert(sizeof(DeferredCompletionEntry) == 32, "a completion entry is 32 bytes");

// What a kernel registers: the scheduler completes the task once *(u32*)addr
// >= expected_value (COUNTER), or *(u64*)addr >= backend_cookie (an SDMA
// post-done record reaching a post id).
struct CompletionToken {
    uint64_t addr;  // device pointer
    uint32_t expected_value;
    uint32_t engine;
    int32_t completion_type;
    uint64_t backend_cookie;
};

// Scheduler error codes latched for the run (simpler's pto_runtime_status.h).
// The runtime's fatal codes (simpler's pto_runtime_status.h): 1-99 detected
// by the orchestrator, 100 and up by the scheduler. A run latches the first.
constexpr int32_t PTO2_ERROR_NONE = 0;
constexpr int32_t PTO2_ERROR_SCOPE_DEADLOCK = 1;
constexpr int32_t PTO2_ERROR_HEAP_RING_DEADLOCK = 2;
constexpr int32_t PTO2_ERROR_FLOW_CONTROL_DEADLOCK = 3;
constexpr int32_t PTO2_ERROR_DEP_POOL_OVERFLOW = 4;
constexpr int32_t PTO2_ERROR_INVALID_ARGS = 5;
constexpr int32_t PTO2_ERROR_REQUIRE_SYNC_START_INVALID = 7;
constexpr int32_t PTO2_ERROR_TENSOR_WAIT_TIMEOUT = 8;
constexpr int32_t PTO2_ERROR_EXPLICIT_ORCH_FATAL = 9;
constexpr int32_t PTO2_ERROR_SCOPE_TASKS_OVERFLOW = 10;
constexpr int32_t PTO2_ERROR_TENSORMAP_OVERFLOW = 11;
constexpr int32_t PTO2_ERROR_SCHEDULER_TIMEOUT = 100;
constexpr int32_t PTO2_ERROR_ASYNC_COMPLETION_INVALID = 101;
constexpr int32_t PTO2_ERROR_ASYNC_WAIT_OVERFLOW = 102;
constexpr int32_t PTO2_ERROR_ASYNC_REGISTRATION_FAILED = 103;
// Their names after the pinned commit (simpler-compat.md §6).
constexpr int32_t SIMPLER_ERROR_ASYNC_COMPLETION_INVALID = PTO2_ERROR_ASYNC_COMPLETION_INVALID;
constexpr int32_t SIMPLER_ERROR_ASYNC_WAIT_OVERFLOW = PTO2_ERROR_ASYNC_WAIT_OVERFLOW;
constexpr int32_t SIMPLER_ERROR_ASYNC_REGISTRATION_FAILED = PTO2_ERROR_ASYNC_REGISTRATION_FAILED;
// The name of a fatal code ("PTO2_ERROR_INVALID_ARGS"), or "unknown code".
constexpr const char* runtime_error_name(int32_t code) {
    switch (code) {
        case PTO2_ERROR_NONE: return "PTO2_ERROR_NONE";
        case PTO2_ERROR_SCOPE_DEADLOCK: return "PTO2_ERROR_SCOPE_DEADLOCK";
        case PTO2_ERROR_HEAP_RING_DEADLOCK: return "PTO2_ERROR_HEAP_RING_DEADLOCK";
        case PTO2_ERROR_FLOW_CONTROL_DEADLOCK: return "PTO2_ERROR_FLOW_CONTROL_DEADLOCK";
        case PTO2_ERROR_DEP_POOL_OVERFLOW: return "PTO2_ERROR_DEP_POOL_OVERFLOW";
        case PTO2_ERROR_INVALID_ARGS: return "PTO2_ERROR_INVALID_ARGS";
        case PTO2_ERROR_REQUIRE_SYNC_START_INVALID: return "PTO2_ERROR_REQUIRE_SYNC_START_INVALID";
        case PTO2_ERROR_TENSOR_WAIT_TIMEOUT: return "PTO2_ERROR_TENSOR_WAIT_TIMEOUT";
        case PTO2_ERROR_EXPLICIT_ORCH_FATAL: return "PTO2_ERROR_EXPLICIT_ORCH_FATAL";
        case PTO2_ERROR_SCOPE_TASKS_OVERFLOW: return "PTO2_ERROR_SCOPE_TASKS_OVERFLOW";
        case PTO2_ERROR_TENSORMAP_OVERFLOW: return "PTO2_ERROR_TENSORMAP_OVERFLOW";
        case PTO2_ERROR_SCHEDULER_TIMEOUT: return "PTO2_ERROR_SCHEDULER_TIMEOUT";
        case PTO2_ERROR_ASYNC_COMPLETION_INVALID: return "PTO2_ERROR_ASYNC_COMPLETION_INVALID";
        case PTO2_ERROR_ASYNC_WAIT_OVERFLOW: return "PTO2_ERROR_ASYNC_WAIT_OVERFLOW";
        case PTO2_ERROR_ASYNC_REGISTRATION_FAILED: return "PTO2_ERROR_ASYNC_REGISTRATION_FAILED";
    }
    return "unknown code";
}

// A dispatch predicate's comparison: the element OP the target.
enum class PredicateOp : uint8_t { NONE = 0, EQ, NE, GT, LT, GE, LE };

struct alignas(64) DeferredCompletionSlab {
    volatile uint32_t count;
    volatile int32_t error_code;
    DeferredCompletionEntry entries[MAX_COMPLETIONS_PER_TASK];
};

struct AsyncCtx {
    volatile uint32_t* completion_count;
    volatile int32_t* completion_error_code;
    volatile DeferredCompletionEntry* completion_entries;
    uint32_t completion_capacity;
    PTO2TaskId task_token;
};

constexpr int DMA_WORKSPACE_SDMA = 0;
constexpr int DMA_WORKSPACE_URMA = 1;  // reserved (a5)
constexpr int DMA_WORKSPACE_KIND_COUNT = 2;

// Kernel launch arguments: slots 0..47 are the kernel's own (32 tensors, 16
// scalars); 48 and 49 point at the contexts below.
constexpr int kArgSlots = 50;
constexpr int kMaxTensorArgs = 32;
constexpr int kMaxScalarArgs = 16;
constexpr int kLocalContextSlot = 48;
constexpr int kGlobalContextSlot = 49;

// Per dispatch of one block of a task.
struct LocalContext {
    int32_t block_idx;  // [0, block_num)
    int32_t block_num;
    AsyncCtx async_ctx;
};

// Per core.
struct GlobalContext {
    int32_t sub_block_id;  // 0 or 1: which vector core of its cluster
    uint64_t dma_workspace[DMA_WORKSPACE_KIND_COUNT];  // device pointers, 0 when none
    uint64_t l2_cache_offset;  // GM's uncached alias above GM (simpler #2323); 0: none
};

}  // namespace pfsim::rt

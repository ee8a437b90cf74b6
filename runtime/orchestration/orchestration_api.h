// The orchestration API of simpler's tensormap_and_ringbuffer runtime, as an
// orchestration source sees it through "pto_orchestration_api.h": arguments,
// task submission, scopes, logging. pfsim runs the orchestration on the host
// before the simulated run, recording a task graph whose dependencies come
// from the tensors each task touches; the graph then runs on the simulated
// AICPU scheduler and cores (runtime/orchestration/task_graph.h).
//
// Names are global, as user code expects them. Every function here acts on
// the graph being built (TaskGraph::Recording); outside one it is an error.
// The orchestration runs alongside the simulation: a task reaches the
// scheduler when it is submitted, and an access to tensor data waits, in
// simulated time, for the task that produces it (docs/runtime.md).
//
// Functions that can fail take the caller's file and line as defaulted
// arguments, so a misuse is reported at the line of the orchestration source.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "runtime/kernel_abi.h"

using pfsim::rt::ChipTensor;
using pfsim::rt::DataType;
using pfsim::rt::PTO2TaskId;
using pfsim::rt::TensorArgType;
using pfsim::rt::PredicateOp;

// The fatal codes an orchestration reports and checks (rt_report_fatal).
using pfsim::rt::PTO2_ERROR_NONE;
using pfsim::rt::PTO2_ERROR_SCOPE_DEADLOCK;
using pfsim::rt::PTO2_ERROR_HEAP_RING_DEADLOCK;
using pfsim::rt::PTO2_ERROR_FLOW_CONTROL_DEADLOCK;
using pfsim::rt::PTO2_ERROR_DEP_POOL_OVERFLOW;
using pfsim::rt::PTO2_ERROR_INVALID_ARGS;
using pfsim::rt::PTO2_ERROR_REQUIRE_SYNC_START_INVALID;
using pfsim::rt::PTO2_ERROR_TENSOR_WAIT_TIMEOUT;
using pfsim::rt::PTO2_ERROR_EXPLICIT_ORCH_FATAL;
using pfsim::rt::PTO2_ERROR_SCOPE_TASKS_OVERFLOW;
using pfsim::rt::PTO2_ERROR_TENSORMAP_OVERFLOW;
using pfsim::rt::PTO2_ERROR_SCHEDULER_TIMEOUT;
using pfsim::rt::PTO2_ERROR_ASYNC_COMPLETION_INVALID;
using pfsim::rt::PTO2_ERROR_ASYNC_WAIT_OVERFLOW;
using pfsim::rt::PTO2_ERROR_ASYNC_REGISTRATION_FAILED;

// simpler's per-ring defaults (runtime_env overrides them): the task window
// (slots of a scope depth's ring; a scope holds at most one less), and the
// dependency pool's entries (fanin edges beyond the 64 kept inline per task,
// and the producers' fanout links). Running out: rt::TaskGraph, the fatal codes
// PTO2_ERROR_SCOPE_DEADLOCK, _FLOW_CONTROL_DEADLOCK and _DEP_POOL_OVERFLOW.
constexpr int PTO2_TASK_WINDOW_SIZE = 16384;
constexpr int PTO2_FANIN_INLINE_CAP = 64;
constexpr int PTO2_DEP_LIST_POOL_SIZE = 16384;

struct PTO2OrchestrationConfig {
    int expected_arg_count;
};

// What the orchestration receives: the case's tensors, then its scalars.
class ChipTaskArgs {
public:
    struct TensorArg {
        const ChipTensor* tensor;
        const ChipTensor& ref() const { return *tensor; }
    };
    uint32_t tensor_count() const { return static_cast<uint32_t>(tensors.size()); }
    uint32_t scalar_count() const { return static_cast<uint32_t>(scalars.size()); }
    // Out of range: an invalid descriptor / 0, and the run fails naming the index.
    TensorArg tensor(uint32_t i) const;
    uint64_t scalar(uint32_t i) const;

    std::vector<const ChipTensor*> tensors;
    std::vector<uint64_t> scalars;
};

// An output the runtime allocates (from its heap ring) when the task is submitted.
struct TensorCreateInfo {
    TensorCreateInfo(const uint32_t* shapes_in, uint32_t ndims_in, DataType dtype_in = DataType::FLOAT32,
                     bool manual_dep_in = false);
    template <typename T>
    void set_initial_value(T v) {
        static_assert(sizeof(T) <= 8, "an initial value is at most 64 bits");
        initial_bits = 0;
        std::memcpy(&initial_bits, &v, sizeof(T));
        has_initial_value = true;
    }
    uint32_t shapes[pfsim::rt::MAX_TENSOR_DIMS] = {};
    uint32_t ndims;
    DataType dtype;
    bool manual_dep;
    bool has_initial_value = false;
    uint64_t initial_bits = 0;
};

constexpr int32_t INVALID_KERNEL_ID = -1;
// A task on one cluster's cores: the cube core and/or its two vector cores.
struct MixedKernels {
    int32_t aic_kernel_id = INVALID_KERNEL_ID;
    int32_t aiv0_kernel_id = INVALID_KERNEL_ID;
    int32_t aiv1_kernel_id = INVALID_KERNEL_ID;
};

// How an explicit dependency binds (simpler's DepFlags): DEP_WAIT orders the
// consumer after the producer; DEP_RETAIN alone keeps the producer's buffer
// alive without ordering (pfsim never reclaims a buffer during a run).
enum DepFlags : uint8_t { DEP_NONE = 0, DEP_WAIT = 1u << 0, DEP_RETAIN = 1u << 1 };
constexpr DepFlags operator|(DepFlags a, DepFlags b) {
    return static_cast<DepFlags>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}

// A dispatch predicate: element `indices` of `tensor` OP `target`. The
// scheduler reads the element from GM when the task is ready (its producer must
// be one of the task's dependencies); false retires the task without a core.
struct CorePredicateOperand {
    const ChipTensor* tensor = nullptr;
    uint32_t ndims = 0;
    uint32_t indices[pfsim::rt::MAX_TENSOR_DIMS] = {};
};
struct CoreTaskPredicate {
    CorePredicateOperand operand;
    PredicateOp op = PredicateOp::NONE;
    int64_t target = 0;
};

// A name simpler has and pfsim does not: a template whose use fails to
// compile with one message naming it (static_assert(pfsim_lacks<...>, "...")).
template <typename...>
inline constexpr bool pfsim_lacks = false;

class CoreTaskArgs {
public:
    static constexpr int kMaxTensors = pfsim::rt::kMaxTensorArgs;
    static constexpr int kMaxScalars = pfsim::rt::kMaxScalarArgs;

    struct TensorEntry {
        TensorArgType type;
        const ChipTensor* tensor;        // null for an OUTPUT to allocate
        const TensorCreateInfo* create;  // OUTPUT only
        const ChipTensor& ref() const { return *tensor; }
        const TensorCreateInfo& create_info() const { return *create; }
    };

    template <typename... T>
    void add_input(const T&... t) { (add(TensorArgType::INPUT, t), ...); }
    template <typename... T>
    void add_inout(const T&... t) { (add(TensorArgType::INOUT, t), ...); }
    template <typename... T>
    void add_no_dep(const T&... t) { (add(TensorArgType::NO_DEP, t), ...); }
    // A TensorCreateInfo: an OUTPUT the runtime allocates; a ChipTensor: an
    // OUTPUT_EXISTING the task writes.
    template <typename... T>
    void add_output(const T&... t) { (add_out(t), ...); }

    // Scalars follow the tensors; each is passed as its raw bits (a float as f32).
    // An lvalue's address is kept, so dump(x) can name the scalar x added.
    template <typename... T>
    void add_scalar(T&&... v) {
        (push_scalar(bits_of(std::decay_t<T>(v)), source_of<T>(v), dtype_of<std::decay_t<T>>()), ...);
    }
    void add_scalars(const uint64_t* v, int n) {
        for (int i = 0; i < n; ++i) push_scalar(v[i]);
    }
    void add_scalars_i32(const int32_t* v, int n) {
        for (int i = 0; i < n; ++i) push_scalar(static_cast<uint64_t>(static_cast<uint32_t>(v[i])));
    }
    // Scalars [offset, offset + n) of `src`, appended.
    void copy_scalars_from(const CoreTaskArgs& src, int offset, int n);
    // Explicit dependencies (DEP_WAIT | DEP_RETAIN each); n == 0 clears them.
    // Once set, setting them again without clearing is an error.
    void set_dependencies(const PTO2TaskId* ids, int n) { set_dependencies_with_kinds(ids, nullptr, n); }
    void set_dependencies_with_kinds(const PTO2TaskId* ids, const DepFlags* kinds, int n);

    struct LaunchSpec {
        void set_block_num(int n) { block_num = n; }
        void set_require_sync_start(bool v) { require_sync_start = v; }
        int block_num = 1;
        bool require_sync_start = false;
    } launch_spec;

    // The task may be staged on a core before its producers finish (a hint).
    void set_allow_early_resolve(bool v = true) { allow_early_resolve_ = v; }
    bool allow_early_resolve() const { return allow_early_resolve_; }
    void set_predicate(const CoreTaskPredicate& p) { predicate_ = p; }
    const CoreTaskPredicate& predicate() const { return predicate_; }

    // Not modelled: simpler's selective task-timing slots.
    template <typename... A>
    void set_task_timing_slot(A...) {
        static_assert(pfsim_lacks<A...>, "pfsim lacks CoreTaskArgs::set_task_timing_slot (simpler's task-timing "
                                         "slots): every task's start and end are in `pfsim run --json` instead");
    }
    // Marks arguments for the argument dump (simpler's --dump-args; docs/python.md):
    // no argument marks every one added so far; otherwise each names one added
    // before: a ChipTensor (an input, inout or existing output), a
    // TensorCreateInfo (an output to allocate) or a scalar variable (the first
    // scalar added from that variable; "ambiguous" when it was added twice).
    // Naming something not added is an error of the submission.
    template <typename... A>
    void dump(A&&... a) {
        static_assert((std::is_lvalue_reference_v<A> && ...), "dump: name tensors and scalars already added (no "
                                                              "temporaries)");
        if constexpr (sizeof...(A) == 0) {
            if (tensor_count_ == 0 && scalar_count_ == 0) return set_error("dump: no arguments added to this Arg");
            dump_mask_ |= (uint64_t{1} << (tensor_count_ + scalar_count_)) - 1;
        } else {
            (mark_dump(a), ...);
        }
    }
    // Bit i: argument i (tensors, then scalars) is marked by dump(); of those,
    // the scalars named by a variable added more than once.
    uint64_t dump_mask() const { return dump_mask_; }
    uint64_t dump_ambiguous_mask() const { return dump_ambiguous_; }
    // The type a scalar was added as (UINT64 when not a plain number type).
    DataType scalar_dtype(int i) const { return scalar_dtypes_[i]; }

    int tensor_count() const { return tensor_count_; }
    int scalar_count() const { return scalar_count_; }
    const TensorEntry& tensor(int i) const { return tensors_[i]; }
    uint64_t scalar(int i) const { return scalars_[i]; }
    const TensorEntry& tensor_entry(int i) const { return tensors_[i]; }
    uint64_t scalar_value(int i) const { return scalars_[i]; }
    int dep_count() const { return static_cast<int>(deps_.size()); }
    PTO2TaskId dep(int i) const { return deps_[static_cast<size_t>(i)]; }
    DepFlags dep_kind(int i) const { return kinds_[static_cast<size_t>(i)]; }

    // Empties the arguments (tensors, scalars, dependencies, hints, predicate;
    // not launch_spec), keeping a recorded error; reset() also forgets the error.
    void clear();
    void reset() {
        clear();
        has_error = false;
        error_msg = nullptr;
    }
    // The first misuse (later ones are dropped); a submission fails with it.
    void set_error(const char* why) {
        if (!has_error) {
            has_error = true;
            error_msg = why;
        }
    }
    const char* error() const { return has_error ? error_msg : nullptr; }
    bool has_error = false;
    const char* error_msg = nullptr;

private:
    template <typename T>
    static uint64_t bits_of(T v) {
        static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>,
                      "add_scalar takes numbers, enums and pointers");
        static_assert(sizeof(T) <= 8, "a scalar is at most 64 bits");
        if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
            return static_cast<uint64_t>(static_cast<int64_t>(v));
        } else if constexpr (std::is_integral_v<T> || std::is_enum_v<T>) {
            return static_cast<uint64_t>(v);
        } else {
            uint64_t out = 0;
            std::memcpy(&out, &v, sizeof(T));
            return out;
        }
    }
    template <typename T>
    static uintptr_t source_of(const T& v) {
        return std::is_lvalue_reference_v<T> ? reinterpret_cast<uintptr_t>(&v) : 0;
    }
    template <typename T>
    static constexpr DataType dtype_of() {
        if constexpr (std::is_same_v<T, float>) return DataType::FLOAT32;
        else if constexpr (std::is_same_v<T, bool>) return DataType::BOOL;
        else if constexpr (std::is_integral_v<T> && sizeof(T) == 4) return std::is_signed_v<T> ? DataType::INT32 : DataType::UINT32;
        else if constexpr (std::is_integral_v<T> && sizeof(T) == 2) return std::is_signed_v<T> ? DataType::INT16 : DataType::UINT16;
        else if constexpr (std::is_integral_v<T> && sizeof(T) == 1) return std::is_signed_v<T> ? DataType::INT8 : DataType::UINT8;
        else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) return DataType::INT64;
        else return DataType::UINT64;
    }
    void add(TensorArgType type, const ChipTensor& t);
    void add_out(const ChipTensor& t) { add(TensorArgType::OUTPUT_EXISTING, t); }
    void add_out(const TensorCreateInfo& c);
    void push_scalar(uint64_t v, uintptr_t source = 0, DataType dtype = DataType::UINT64);
    void mark_dump(const ChipTensor& t);
    void mark_dump(const TensorCreateInfo& c);
    template <typename T>
    void mark_dump(const T& scalar) {
        static_assert(std::is_arithmetic_v<T> || std::is_enum_v<T> || std::is_pointer_v<T>,
                      "dump: arguments are ChipTensor, TensorCreateInfo or scalar variables");
        mark_dump_scalar(reinterpret_cast<uintptr_t>(&scalar));
    }
    void mark_dump_scalar(uintptr_t source);

    TensorEntry tensors_[kMaxTensors] = {};
    int tensor_count_ = 0;
    uint64_t scalars_[kMaxScalars] = {};
    uintptr_t scalar_sources_[kMaxScalars] = {};
    DataType scalar_dtypes_[kMaxScalars] = {};
    int scalar_count_ = 0;
    uint64_t dump_mask_ = 0, dump_ambiguous_ = 0;
    static_assert(kMaxTensors + kMaxScalars <= 64, "a dump mask bit per argument");
    std::vector<PTO2TaskId> deps_;
    std::vector<DepFlags> kinds_;
    bool allow_early_resolve_ = false;
    CoreTaskPredicate predicate_;
};

// What a submission returns: the task and the outputs it allocated. Valid
// while the graph is being recorded.
class TaskOutputTensors {
public:
    TaskOutputTensors() = default;
    TaskOutputTensors(PTO2TaskId id, std::vector<const ChipTensor*> outputs) : id_(id), outputs_(std::move(outputs)) {}
    const ChipTensor& get_ref(int i) const;
    int size() const { return static_cast<int>(outputs_.size()); }
    PTO2TaskId task_id() const { return id_; }

private:
    PTO2TaskId id_;
    std::vector<const ChipTensor*> outputs_;
};

// Where in the orchestration source a call was made (defaulted arguments).
#define PFSIM_CALL_SITE const char *file = __builtin_FILE(), int line = __builtin_LINE()

TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args, PFSIM_CALL_SITE);
TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args, PFSIM_CALL_SITE);
TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args, PFSIM_CALL_SITE);
TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args, PFSIM_CALL_SITE);

// Outputs allocated from the heap ring with no kernel (a task that completes
// at once): only TensorCreateInfo outputs.
TaskOutputTensors alloc_tensors(const CoreTaskArgs& args, PFSIM_CALL_SITE);
TaskOutputTensors alloc_tensors(const TensorCreateInfo create_infos[], uint32_t count, PFSIM_CALL_SITE);
TaskOutputTensors alloc_tensors(const TensorCreateInfo& a, PFSIM_CALL_SITE);
TaskOutputTensors alloc_tensors(const TensorCreateInfo& a, const TensorCreateInfo& b, PFSIM_CALL_SITE);
TaskOutputTensors alloc_tensors(const TensorCreateInfo& a, const TensorCreateInfo& b, const TensorCreateInfo& c,
                                PFSIM_CALL_SITE);
// Five or more: misuse is reported at this header's line, not the caller's.
template <typename... CIs>
TaskOutputTensors alloc_tensors(const TensorCreateInfo& first, const CIs&... rest) {
    static_assert((std::is_same_v<std::decay_t<CIs>, TensorCreateInfo> && ...),
                  "alloc_tensors only accepts TensorCreateInfo arguments");
    CoreTaskArgs args;
    args.add_output(first, rest...);
    return alloc_tensors(args);
}

// The raw bits of element `indices` of `tensor`, read through GM by the
// orchestrator once the task that produces it (TensorMap) has completed.
uint64_t rt_get_tensor_data(const ChipTensor& tensor, uint32_t ndims, const uint32_t indices[], PFSIM_CALL_SITE);
// Writes element `indices` once its producer and that producer's readers completed.
// Both access the tensor's element size (its dtype's) in GM.
void rt_set_tensor_data(const ChipTensor& tensor, uint32_t ndims, const uint32_t indices[], uint64_t bits,
                        PFSIM_CALL_SITE);
template <typename T = uint64_t>
T get_tensor_data(const ChipTensor& tensor, uint32_t ndims, const uint32_t indices[], PFSIM_CALL_SITE) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "get_tensor_data reads at most 64 bits");
    const uint64_t bits = rt_get_tensor_data(tensor, ndims, indices, file, line);
    T out;
    std::memcpy(&out, &bits, sizeof(T));
    return out;
}
template <typename T = uint64_t>
void set_tensor_data(const ChipTensor& tensor, uint32_t ndims, const uint32_t indices[], T value, PFSIM_CALL_SITE) {
    static_assert(std::is_trivially_copyable_v<T> && sizeof(T) <= 8, "set_tensor_data writes at most 64 bits");
    uint64_t bits = 0;
    std::memcpy(&bits, &value, sizeof(T));
    rt_set_tensor_data(tensor, ndims, indices, bits, file, line);
}

enum class PTO2ScopeMode { AUTO, MANUAL };
void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO, PFSIM_CALL_SITE);
void rt_scope_end();
class PTO2ScopeGuard {
public:
    explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO, PFSIM_CALL_SITE) { rt_scope_begin(mode, file, line); }
    ~PTO2ScopeGuard() { rt_scope_end(); }
    PTO2ScopeGuard(const PTO2ScopeGuard&) = delete;
    PTO2ScopeGuard& operator=(const PTO2ScopeGuard&) = delete;
};
#define PTO2_SCOPE_CAT2(a, b) a##b
#define PTO2_SCOPE_CAT(a, b) PTO2_SCOPE_CAT2(a, b)
#define PTO2_SCOPE_GUARD(...) PTO2ScopeGuard PTO2_SCOPE_CAT(pto2_scope_guard_, __LINE__){__VA_ARGS__}
#define PTO2_SCOPE(...) if (PTO2ScopeGuard PTO2_SCOPE_CAT(pto2_scope_, __LINE__){__VA_ARGS__}; true)

int rt_available_cluster_count();
int rt_available_aiv_count();
bool rt_is_fatal();
// Latches `code` (the first one reported wins): the orchestration goes on, every
// later submission is dropped, and the run fails naming the code and the line.
void rt_report_fatal_at(const char* file, int line, int code, const char* fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define rt_report_fatal(code, ...) rt_report_fatal_at(__FILE__, __LINE__, (code), __VA_ARGS__)
void rt_orchestration_done();
// The AICPU's cache maintenance of [addr, addr + size) ("aicpu/cache_maintenance.h"):
// the orchestrator spends orch.tensor_data_cost while the simulation runs on, so
// a loop polling GM between these calls sees the kernels' writes.
void rt_cache_maintenance(const void* addr, size_t size, PFSIM_CALL_SITE);
#define SPIN_WAIT_HINT() ((void)0)

enum class PTO2LogLevel { ERROR, WARN, INFO, DEBUG, TIMING };
void pto2_log(PTO2LogLevel level, const char* function, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
#define LOG_ERROR(...) pto2_log(PTO2LogLevel::ERROR, __FUNCTION__, __VA_ARGS__)
#define LOG_WARN(...) pto2_log(PTO2LogLevel::WARN, __FUNCTION__, __VA_ARGS__)
#define LOG_INFO(...) pto2_log(PTO2LogLevel::INFO, __FUNCTION__, __VA_ARGS__)
#define LOG_DEBUG(...) pto2_log(PTO2LogLevel::DEBUG, __FUNCTION__, __VA_ARGS__)
#define LOG_TIMING(...) pto2_log(PTO2LogLevel::TIMING, __FUNCTION__, __VA_ARGS__)

// The names simpler renamed after the pinned commit (shared/docs/simpler-compat.md
// §6): the old and the new spelling name the same thing, in one program.
using OrchestrationConfig = PTO2OrchestrationConfig;
using ScopeMode = PTO2ScopeMode;
using TaskId = PTO2TaskId;
#define SIMPLER_SCOPE(...) PTO2_SCOPE(__VA_ARGS__)
using pfsim::rt::SIMPLER_ERROR_ASYNC_COMPLETION_INVALID;
using pfsim::rt::SIMPLER_ERROR_ASYNC_WAIT_OVERFLOW;
using pfsim::rt::SIMPLER_ERROR_ASYNC_REGISTRATION_FAILED;
namespace simpler::tmr {
using Tensor = ::ChipTensor;
}  // namespace simpler::tmr

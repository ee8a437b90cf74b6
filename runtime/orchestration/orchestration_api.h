// The orchestration API of simpler's tensormap_and_ringbuffer runtime, as an
// orchestration source sees it through "pto_orchestration_api.h": arguments,
// task submission, scopes, logging. pfsim runs the orchestration on the host
// before the simulated run, recording a task graph whose dependencies come
// from the tensors each task touches; the graph then runs on the simulated
// AICPU scheduler and cores (runtime/orchestration/task_graph.h).
//
// Names are global, as user code expects them. Every function here acts on
// the graph being built (TaskGraph::Recording); outside one it is an error.
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

class CoreTaskArgs {
public:
    static constexpr int kMaxTensors = pfsim::rt::kMaxTensorArgs;
    static constexpr int kMaxScalars = pfsim::rt::kMaxScalarArgs;
    static constexpr int kMaxDeps = 64;

    struct TensorEntry {
        TensorArgType type;
        const ChipTensor* tensor;        // null for an OUTPUT to allocate
        const TensorCreateInfo* create;  // OUTPUT only
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
    template <typename... T>
    void add_scalar(T... v) { (push_scalar(bits_of(v)), ...); }
    void add_scalars(const uint64_t* v, int n) {
        for (int i = 0; i < n; ++i) push_scalar(v[i]);
    }
    void add_scalars_i32(const int32_t* v, int n) {
        for (int i = 0; i < n; ++i) push_scalar(static_cast<uint64_t>(static_cast<uint32_t>(v[i])));
    }
    void set_dependencies(const PTO2TaskId* ids, int n);

    struct LaunchSpec {
        void set_block_num(int n) { block_num = n; }
        void set_require_sync_start(bool v) { require_sync_start = v; }
        int block_num = 1;
        bool require_sync_start = false;
    } launch_spec;

    int tensor_count() const { return tensor_count_; }
    int scalar_count() const { return scalar_count_; }
    const TensorEntry& tensor_entry(int i) const { return tensors_[i]; }
    uint64_t scalar_value(int i) const { return scalars_[i]; }
    int dep_count() const { return dep_count_; }
    PTO2TaskId dep(int i) const { return deps_[i]; }
    const char* error() const { return error_; }  // the first misuse, or null

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
    void add(TensorArgType type, const ChipTensor& t);
    void add_out(const ChipTensor& t) { add(TensorArgType::OUTPUT_EXISTING, t); }
    void add_out(const TensorCreateInfo& c);
    void push_scalar(uint64_t v);
    void fail(const char* why) {
        if (!error_) error_ = why;
    }

    TensorEntry tensors_[kMaxTensors] = {};
    int tensor_count_ = 0;
    uint64_t scalars_[kMaxScalars] = {};
    int scalar_count_ = 0;
    PTO2TaskId deps_[kMaxDeps] = {};
    int dep_count_ = 0;
    bool deps_set_ = false;
    const char* error_ = nullptr;
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

TaskOutputTensors rt_submit_task(const MixedKernels& kernels, const CoreTaskArgs& args);
TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, const CoreTaskArgs& args);
TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, const CoreTaskArgs& args);
TaskOutputTensors rt_submit_dummy_task(const CoreTaskArgs& args);

enum class PTO2ScopeMode { AUTO, MANUAL };
void rt_scope_begin(PTO2ScopeMode mode = PTO2ScopeMode::AUTO);
void rt_scope_end();
class PTO2ScopeGuard {
public:
    explicit PTO2ScopeGuard(PTO2ScopeMode mode = PTO2ScopeMode::AUTO) { rt_scope_begin(mode); }
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
void rt_report_fatal(int code, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
void rt_orchestration_done();

enum class PTO2LogLevel { ERROR, WARN, INFO, DEBUG, TIMING };
void pto2_log(PTO2LogLevel level, const char* function, const char* fmt, ...) __attribute__((format(printf, 3, 4)));
#define LOG_ERROR(...) pto2_log(PTO2LogLevel::ERROR, __FUNCTION__, __VA_ARGS__)
#define LOG_WARN(...) pto2_log(PTO2LogLevel::WARN, __FUNCTION__, __VA_ARGS__)
#define LOG_INFO(...) pto2_log(PTO2LogLevel::INFO, __FUNCTION__, __VA_ARGS__)
#define LOG_DEBUG(...) pto2_log(PTO2LogLevel::DEBUG, __FUNCTION__, __VA_ARGS__)
#define LOG_TIMING(...) pto2_log(PTO2LogLevel::TIMING, __FUNCTION__, __VA_ARGS__)

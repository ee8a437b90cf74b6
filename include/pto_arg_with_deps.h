// pfsim's "pto_arg_with_deps.h": CoreTaskArgs with its explicit dependencies
// held inside (at most MAX_DEP_COUNT), added one or a few at a time, and the
// rt_submit_* overloads that take it. Also reached through
// "pto_orchestration_api.h", which includes this header at its end.
#pragma once

#include <cstddef>
#include <type_traits>

#include "runtime/orchestration/orchestration_api.h"

template <size_t MAX_DEP_COUNT = 16>
class CoreTaskArgsWithDeps : private CoreTaskArgs {
public:
    using CoreTaskArgs::add_inout;
    using CoreTaskArgs::add_input;
    using CoreTaskArgs::add_no_dep;
    using CoreTaskArgs::add_output;
    using CoreTaskArgs::add_scalar;
    using CoreTaskArgs::add_scalars;
    using CoreTaskArgs::add_scalars_i32;
    using CoreTaskArgs::allow_early_resolve;
    using CoreTaskArgs::error_msg;
    using CoreTaskArgs::has_error;
    using CoreTaskArgs::launch_spec;
    using CoreTaskArgs::scalar;
    using CoreTaskArgs::scalar_count;
    using CoreTaskArgs::set_allow_early_resolve;
    using CoreTaskArgs::set_error;
    using CoreTaskArgs::set_predicate;
    using CoreTaskArgs::tensor;
    using CoreTaskArgs::tensor_count;

    // Dependencies that order this task after theirs and keep their buffers.
    template <typename... Ids>
    void add_dep(Ids... ids) {
        add(DEP_WAIT | DEP_RETAIN, ids...);
    }
    // Dependencies that only order this task after theirs.
    template <typename... Ids>
    void add_dep_wait(Ids... ids) {
        add(DEP_WAIT, ids...);
    }
    void reset() {
        CoreTaskArgs::reset();
        count_ = 0;
    }
    // The arguments with the dependencies bound (the rt_submit_* overloads call it).
    const CoreTaskArgs& finalize_for_submit() {
        CoreTaskArgs::set_dependencies(nullptr, 0);
        CoreTaskArgs::set_dependencies_with_kinds(deps_, kinds_, static_cast<int>(count_));
        return *this;
    }

private:
    template <typename... Ids>
    void add(DepFlags kind, Ids... ids) {
        static_assert(sizeof...(Ids) >= 1, "add_dep/add_dep_wait: at least one task id");
        static_assert((std::is_same_v<std::decay_t<Ids>, PTO2TaskId> && ...),
                      "add_dep/add_dep_wait: every argument is a PTO2TaskId");
        if (count_ + sizeof...(Ids) > MAX_DEP_COUNT) {
            return set_error("CoreTaskArgsWithDeps: more dependencies than its MAX_DEP_COUNT");
        }
        ((kinds_[count_] = kind, deps_[count_] = ids, ++count_), ...);
    }

    PTO2TaskId deps_[MAX_DEP_COUNT];
    DepFlags kinds_[MAX_DEP_COUNT] = {};
    size_t count_ = 0;
};

template <size_t N>
TaskOutputTensors rt_submit_task(const MixedKernels& kernels, CoreTaskArgsWithDeps<N>& args, PFSIM_CALL_SITE) {
    return rt_submit_task(kernels, args.finalize_for_submit(), file, line);
}
template <size_t N>
TaskOutputTensors rt_submit_aic_task(int32_t kernel_id, CoreTaskArgsWithDeps<N>& args, PFSIM_CALL_SITE) {
    return rt_submit_aic_task(kernel_id, args.finalize_for_submit(), file, line);
}
template <size_t N>
TaskOutputTensors rt_submit_aiv_task(int32_t kernel_id, CoreTaskArgsWithDeps<N>& args, PFSIM_CALL_SITE) {
    return rt_submit_aiv_task(kernel_id, args.finalize_for_submit(), file, line);
}
template <size_t N>
TaskOutputTensors rt_submit_dummy_task(CoreTaskArgsWithDeps<N>& args, PFSIM_CALL_SITE) {
    return rt_submit_dummy_task(args.finalize_for_submit(), file, line);
}

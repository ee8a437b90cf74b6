// The kernels pfsim ships: each has device code written in the shape of the
// onboard prefetch demo (kernels/NAME/kernel.cc) and a host side (host.cc) that
// builds deterministic inputs, computes the plain C++ reference, and states the
// gain prefetch should bring, with its derivation.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loader/compiler.h"
#include "model/config/config.h"
#include "runtime/platform/platform.h"
#include "runtime/worker.h"

namespace pfsim {

struct KernelArgSpec {
    std::string name;
    std::string default_value;  // with units, as --arg takes it
    std::string description;
};

// Resolved --arg values: sizes in bytes, counts as numbers.
using KernelArgs = std::map<std::string, uint64_t>;

struct ExpectedGain {
    double min_pct;  // the gain (% of time without prefetch) check requires at least...
    double max_pct;  // ...and at most
};

struct KernelOutput {
    std::string name;
    uint64_t addr = 0;
    uint64_t bytes = 0;
    std::vector<uint8_t> expected;  // the plain C++ reference
};

struct PreparedKernel {
    rt::KernelLaunch launch;
    std::vector<KernelOutput> outputs;
    std::vector<std::unique_ptr<uint8_t[]>> host_memory;  // ChipTensors the args point at
};

class KernelCase {
public:
    virtual ~KernelCase() = default;
    virtual std::string name() const = 0;
    virtual std::string description() const = 0;
    // The device source, a path in the embedded "kernels" tree: compiled at
    // run time for the core types the launch uses, like a user's kernel.
    virtual std::string source() const { return name() + "/kernel.cc"; }
    virtual std::vector<KernelArgSpec> args() const { return {}; }
    // Whether `pfsim check` runs it (calibration microbenchmarks do not).
    virtual bool in_check() const { return true; }
    virtual ExpectedGain expected_gain(const KernelArgs& args) const = 0;
    // Allocates and fills the inputs in GM, computes the reference outputs.
    virtual PreparedKernel prepare(rt::Platform& platform, const KernelArgs& args) const = 0;
};

// Every registered kernel, by name (sorted).
const std::map<std::string, const KernelCase*>& kernel_registry();
const KernelCase* find_kernel(const std::string& name);

struct RegisterKernel {
    explicit RegisterKernel(const KernelCase* k);
};

// Parses --arg name=value pairs against the kernel's args (unit suffixes allowed);
// throws std::invalid_argument naming the kernel and argument at fault.
KernelArgs resolve_kernel_args(const KernelCase& k, const std::vector<std::string>& assignments);

// The case files pfsim ships (kernels/cases/*/*.toml), unpacked into the
// compile cache, sorted.
std::vector<std::string> shipped_cases();
// The shipped case file whose case is named `name` (its `name` key, else its
// file name), or empty.
std::string shipped_case_named(const std::string& name);
// A shipped case file's path as it is in pfsim's sources
// ("kernels/cases/no_gain/case.toml"); other paths unchanged.
std::string shipped_case_label(const std::string& path);

// Compiles and loads k's device code for the core types of `spec`.
rt::KernelEntries load_kernel(KernelCompiler& compiler, const KernelCase& k, const rt::LaunchSpec& spec);

// Helpers for host sides.
// A ChipTensor in host memory over `bytes` of fresh GM; its pointer goes in args.
int64_t make_tensor(PreparedKernel& p, rt::Platform& platform, uint64_t bytes, uint64_t* gm_addr);
// Deterministic pseudo-random bytes (same seed, same bytes).
std::vector<uint8_t> random_bytes(uint64_t bytes, uint64_t seed);

}  // namespace pfsim

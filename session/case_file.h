// A declarative case (CASE.toml): an orchestration and its incores from
// source, the tensors and scalars it is called with, which tensors are
// outputs and their goldens. `pfsim run CASE.toml` and `pfsim check CASE.toml`
// run it; docs/cases.md is the reference of the format.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "runtime/kernel_abi.h"

namespace pfsim {

// A case file that cannot be used: "FILE:LINE: KEY: what is wrong".
class CaseError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

// How a tensor's values are made: zeros, a constant, start + step * i, seeded
// uniform random in [low, high) (integers: floored; with `step`, floats too
// are low + a whole number of steps), or a .npy file.
struct Values {
    enum class Kind { Zeros, Fill, Arange, Random, Npy };
    Kind kind = Kind::Zeros;
    double value = 0, start = 0, step = 1, low = 0, high = 1;
    bool stepped = false;  // random: step given
    uint64_t seed = 0;
    std::string npy;  // absolute path (kind = npy)
};

struct TensorSpec {
    std::string name;
    rt::DataType dtype = rt::DataType::FLOAT32;
    std::vector<uint32_t> shape;
    Values init;
    bool output = false;      // compared after the run (OUT / INOUT)
    // The golden of an output: equal to another tensor's initial values
    // (golden = "NAME"), or values made like an initial value
    // (golden = { init = "fill", value = 4096 }, golden_npy = "FILE.npy"), or
    // neither: what the case's [golden] source computes.
    std::string golden_tensor;
    bool has_golden_values = false;
    Values golden_values;
    double rtol = 1e-5, atol = 1e-5;
    std::string where;        // "FILE:LINE" of its table
    uint64_t elements() const;
    uint64_t bytes() const { return elements() * rt::element_size(dtype); }
};

struct ScalarSpec {
    std::string name;
    // int64, int32, uint64, uint32, float32, float64; or comm_context (a
    // level-3 case): the pointer to the running rank's CommContext
    std::string type;
    uint64_t bits = 0; // as the kernel receives it
    double value = 0;  // as the case file gives it
};

struct IncoreSpec {
    int32_t func_id = 0;
    std::string source;  // absolute
    bool vector = true;
    std::string where;
};

// What simpler calls a ChipCallable: an orchestration and its incores, from source.
struct CallableSpec {
    std::string orchestration;  // absolute source path
    std::string function = "aicpu_orchestration_entry";
    std::string config_function = "aicpu_orchestration_config";
    std::vector<IncoreSpec> incores;
    std::vector<std::string> include_dirs;  // absolute
};

struct CaseSpec : CallableSpec {
    std::string path, name, description;
    std::vector<TensorSpec> tensors;
    std::vector<ScalarSpec> scalars;
    bool enable_sdma = true;
    // Level 3 (`ranks` > 1): every rank runs the callable with its own copy of
    // the tensors on its own die of one simulation, each with a communication
    // window of `window_bytes` (zeroed) its comm_context scalar describes.
    uint32_t ranks = 1;
    uint64_t window_bytes = 0;
    bool in_check = true;  // `check = false`: a calibration instrument, which `pfsim check` skips unless named
    std::map<std::string, double> params;  // [params], after --arg overrides
    double expected_min_pct = -1e9, expected_max_pct = 1e9;  // the gain `check --strict-gain` expects
    // [golden]: host C++ computing the outputs that have no golden of their
    // own (include/pfsim_golden.h); empty = none.
    std::string golden_source;  // absolute
    std::string golden_function = "compute_golden";
    bool computes_golden(const TensorSpec& t) const {
        return t.output && t.golden_tensor.empty() && !t.has_golden_values && !golden_source.empty();
    }
    // Every file the case reads, each with what it is ("the case file", "the
    // source of incore 7", "tensor x's .npy"): what no output may overwrite.
    std::vector<std::pair<std::string, std::string>> inputs() const;
};

// When `output` names the same file as one of `inputs` (what, path), what
// that input is; else "". Files are compared by identity (device and inode),
// so another spelling of the same path, or a link to it, is found too.
std::string input_named_by(const std::string& output, const std::vector<std::pair<std::string, std::string>>& inputs);

// Whether `name` may name a tensor: 1 to 200 of letters, digits, '_', '-' and
// '.', not starting with '.' (an output is written as NAME.npy under --outputs,
// so no name may reach outside that folder).
bool is_tensor_name(const std::string& name);

// Whether `path` names a case file (*.toml) rather than a built-in kernel.
bool is_case_file(const std::string& path);

// Reads and validates a case file; relative paths in it are relative to its
// folder. `overrides` (NAME=VALUE, from --arg) replace [params] values; a
// number anywhere in the file may be a parameter's name. Throws CaseError.
CaseSpec read_case(const std::string& path, const std::vector<std::string>& overrides = {});

// Data types by the names case files (and numpy/torch) use: float32, float16,
// bfloat16, int8, ... Throws CaseError naming `where` for an unknown one.
rt::DataType parse_dtype(const std::string& name, const std::string& where);
const char* dtype_name(rt::DataType t);
// The .npy descr of a data type ("<f4"), empty for bfloat16 (numpy has none).
std::string npy_descr(rt::DataType t);

// The bytes `v` makes for tensor t; throws CaseError when a .npy does not match.
std::vector<uint8_t> make_values(const TensorSpec& t, const Values& v);
inline std::vector<uint8_t> initial_values(const TensorSpec& t) { return make_values(t, t.init); }

// Element i of `bytes` (of type t) as a double.
double element_value(rt::DataType t, const uint8_t* bytes, uint64_t i);

}  // namespace pfsim

// pfsim case-data: what a case file describes, for its derived scene test
// (pfsim.testing.CaseFileTest): the description as JSON on stdout and, with
// --out DIR, each tensor's initial values and each output's golden as .npy,
// made by the same code a run of the case uses (session/case_runner.h).
#include <filesystem>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "session/case_file.h"
#include "session/case_runner.h"
#include "session/failure.h"
#include "session/npy.h"

namespace pfsim {

namespace {

// The callable, the tensors and the scalars of `spec`, as a scene test names them.
nlohmann::json describe(const CaseSpec& spec) {
    nlohmann::json incores = nlohmann::json::array(), tensors = nlohmann::json::array(),
                   scalars = nlohmann::json::array();
    for (const IncoreSpec& k : spec.incores) {
        incores.push_back({{"func_id", k.func_id}, {"source", k.source}, {"core_type", k.vector ? "aiv" : "aic"}});
    }
    for (const TensorSpec& t : spec.tensors) {
        tensors.push_back({{"name", t.name}, {"dtype", dtype_name(t.dtype)}, {"shape", t.shape}, {"output", t.output},
                           {"rtol", t.rtol}, {"atol", t.atol}});
    }
    for (const ScalarSpec& s : spec.scalars) scalars.push_back({{"name", s.name}, {"type", s.type}, {"bits", s.bits}});
    return {{"name", spec.name},
            {"enable_sdma", spec.enable_sdma},
            {"ranks", spec.ranks},
            {"orchestration",
             {{"source", spec.orchestration},
              {"function", spec.function},
              {"config", spec.config_function}}},
            {"incores", incores},
            {"include_dirs", spec.include_dirs},
            {"params", spec.params},
            {"tensors", tensors},
            {"scalars", scalars}};
}

void write_data(const std::string& dir, const CaseSpec& spec) {
    KernelCompiler compiler;
    const CaseData data = case_data(spec, compiler);
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    for (size_t i = 0; i < spec.tensors.size(); ++i) {
        const TensorSpec& t = spec.tensors[i];
        NpyArray a;
        a.descr = npy_descr(t.dtype);
        a.shape.assign(t.shape.begin(), t.shape.end());
        a.data = data.initial[i];
        write_npy(dir + "/" + t.name + ".npy", a);
        if (!t.output) continue;
        a.data = data.golden[i];
        write_npy(dir + "/" + t.name + ".golden.npy", a);
    }
}

}  // namespace

int cmd_case_data(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {}, {"--arg", "--out"});
    if (o.positional.size() != 1) throw UsageError("case-data takes one case file");
    const std::string out = value_of(o, "--out", "");
    try {
        const CaseSpec spec = read_case(user_path(o.positional[0]), o.values["--arg"]);
        if (spec.ranks > 1) {
            throw api::BadInput(o.positional[0] + ": ranks = " + std::to_string(spec.ranks) +
                                ": case-data describes one die's case; a level-3 case has no derived scene test yet");
        }
        if (!out.empty()) write_data(user_path(out), spec);
        std::cout << describe(spec).dump(2) << "\n";
    } catch (const std::invalid_argument& e) {  // the case, or a golden refusing its values
        throw api::BadInput(e.what());
    } catch (const std::runtime_error&) {
        const api::Failure f = api::failure_in_flight();
        if (f.from_runtime) {  // the [golden] source faulted
            std::cerr << "pfsim: " << f.message << "\n";
            return 1;
        }
        if (f.kind != "compile" && f.kind != "bad_input") throw;
        throw api::BadInput(f.message);
    }
    return 0;
}

}  // namespace pfsim

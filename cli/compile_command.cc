// pfsim compile: builds sources through the run-time compile cache, so a user
// can check that a kernel or an orchestration builds against pfsim's headers.
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/options.h"
#include "loader/compiler.h"

namespace pfsim {

int cmd_compile(const std::vector<std::string>& args) {
    CommonOptions o = parse_options(args, {"--orchestration", "--print-command"}, {"--core", "-I"});
    if (o.positional.empty()) throw UsageError("compile takes one or more source files");
    const bool orchestration = has_flag(o, "--orchestration");
    const std::string core = value_of(o, "--core", orchestration ? "" : "aiv");
    if (orchestration && !o.values["--core"].empty()) throw UsageError("--core and --orchestration exclude each other");
    if (!orchestration && core != "aiv" && core != "aic") throw UsageError("--core takes aiv or aic, not '" + core + "'");
    const BuildKind kind = orchestration ? BuildKind::Orchestration : core == "aiv" ? BuildKind::Aiv : BuildKind::Aic;
    std::vector<std::string> includes;
    for (const std::string& d : o.values["-I"]) includes.push_back(user_path(d));
    KernelCompiler compiler;
    nlohmann::json rows = nlohmann::json::array();
    int failed = 0;
    for (const std::string& source : o.positional) {
        nlohmann::json row = {{"source", source}, {"kind", build_kind_name(kind)}};
        const uint64_t before = compiler.compiled();
        try {
            row["object"] = compiler.compile(user_path(source), kind, includes);
            row["cached"] = compiler.compiled() == before;
            if (!o.json) std::printf("%s (%s): ok%s\n", source.c_str(), build_kind_name(kind),
                                     row["cached"].get<bool>() ? ", cached" : "");
        } catch (const CompileError& e) {
            row["error"] = e.what();
            ++failed;
            std::cerr << e.what();
        } catch (const std::runtime_error& e) {
            throw UsageError(e.what());  // the compiler or the cache cannot be used at all
        }
        rows.push_back(row);
    }
    if (has_flag(o, "--print-command") && !o.json) {
        std::string line;
        for (const std::string& a : compiler.command(kind, includes)) line += a + " ";
        std::printf("%s-o OBJECT.so SOURCE\n", line.c_str());
    }
    if (o.json) std::cout << nlohmann::json{{"sources", rows}, {"cache", compiler.cache_dir()}}.dump(2) << "\n";
    return failed ? 2 : 0;
}

}  // namespace pfsim

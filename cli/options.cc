#include "cli/options.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "session/case_file.h"

namespace pfsim {

CommonOptions parse_options(const std::vector<std::string>& args, const std::vector<std::string>& flags,
                            const std::vector<std::string>& valued) {
    CommonOptions o;
    for (size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& name) -> std::string {
            const std::string prefix = name + "=";
            if (a.rfind(prefix, 0) == 0) return a.substr(prefix.size());
            if (i + 1 >= args.size()) throw UsageError(name + " needs a value");
            return args[++i];
        };
        auto is = [&](const std::string& name) { return a == name || a.rfind(name + "=", 0) == 0; };
        if (is("--preset")) {
            o.preset = value("--preset");
        } else if (is("--config")) {
            o.config_files.push_back(user_path(value("--config")));
        } else if (is("--set")) {
            o.sets.push_back(value("--set"));
        } else if (a == "--json") {
            o.json = true;
        } else if (std::find(flags.begin(), flags.end(), a) != flags.end()) {
            o.flags.push_back(a);
        } else if (auto v = std::find_if(valued.begin(), valued.end(), is); v != valued.end()) {
            o.values[*v].push_back(value(*v));
        } else if (a.size() > 1 && a[0] == '-') {
            throw UsageError("unknown option '" + a + "'");
        } else {
            o.positional.push_back(a);
        }
    }
    // --timeout SECONDS (on the commands that take it) is orch.host_time_limit,
    // so that it reaches child runs with the configuration.
    if (auto t = o.values.find("--timeout"); t != o.values.end()) {
        for (const std::string& v : t->second) {
            char* end = nullptr;
            const double s = std::strtod(v.c_str(), &end);
            if (v.empty() || *end != '\0' || !(s >= 0) || s > 1e6) {
                throw UsageError("--timeout takes the host seconds a run may take (0: no limit), not '" + v + "'");
            }
            o.sets.push_back("orch.host_time_limit=" + v + " s");
        }
        o.values.erase(t);
    }
    return o;
}

bool has_flag(const CommonOptions& o, const std::string& flag) {
    return std::find(o.flags.begin(), o.flags.end(), flag) != o.flags.end();
}

std::string value_of(const CommonOptions& o, const std::string& option, const std::string& fallback) {
    auto it = o.values.find(option);
    return it == o.values.end() || it->second.empty() ? fallback : it->second.back();
}

unsigned jobs_option(const CommonOptions& o) {
    const std::string v = value_of(o, "--jobs", std::to_string(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN))));
    char* end = nullptr;
    const unsigned long n = std::strtoul(v.c_str(), &end, 10);
    if (v.empty() || v[0] < '0' || v[0] > '9' || *end != '\0' || n == 0 || n > 256) {
        throw UsageError("--jobs takes a whole number from 1 to 256, not '" + v + "'");
    }
    return static_cast<unsigned>(n);
}

int64_t progress_option_ms(const CommonOptions& o) {
    const std::string every = value_of(o, "--progress", "10");
    double seconds = 0;
    try {
        size_t used = 0;
        seconds = std::stod(every, &used);
        if (used != every.size() || !(seconds >= 0) || seconds > 86400) throw std::invalid_argument(every);
    } catch (const std::exception&) {
        throw UsageError("--progress takes seconds between progress lines (0: none), not '" + every + "'");
    }
    return seconds > 0 ? std::max<int64_t>(1, static_cast<int64_t>(seconds * 1000)) : 0;
}

void check_writable(const std::string& path) {
    if (path.empty()) return;
    const std::filesystem::path p(user_path(path));
    std::error_code ec;
    const bool exists = std::filesystem::exists(p, ec);
    const std::filesystem::path dir = p.has_parent_path() ? p.parent_path() : std::filesystem::path(".");
    if (std::filesystem::is_directory(p, ec)) throw UsageError(path + ": is a directory");
    if (exists ? access(p.c_str(), W_OK) != 0 : access(dir.c_str(), W_OK) != 0) {
        throw UsageError(path + ": cannot write (" + std::strerror(errno) + ")");
    }
}

void write_output(const std::string& path, const std::string& text) {
    std::ofstream out(user_path(path), std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw UsageError(path + ": cannot write (" + std::strerror(errno) + ")");
}

api::ConfigChoice config_choice(const CommonOptions& options) {
    return {options.preset, options.config_files, options.sets};
}

Config resolve_config(const CommonOptions& options) { return config_choice(options).resolve(); }

std::vector<std::string> config_args(const CommonOptions& options) {
    std::vector<std::string> out = {"--preset", options.preset};
    for (const std::string& f : options.config_files) out.insert(out.end(), {"--config", f});
    for (const std::string& s : options.sets) out.insert(out.end(), {"--set", s});
    return out;
}

void refuse_overwriting_an_input(const CommonOptions& o, const std::string& option, const std::string& output,
                                 std::vector<std::pair<std::string, std::string>> inputs) {
    for (const std::string& f : o.config_files) inputs.push_back({"a --config file", f});
    const std::string input = input_named_by(user_path(output), inputs);
    if (!input.empty()) throw UsageError(option + " " + output + ": is " + input + ", which is read; not overwritten");
}

std::string user_path(const std::string& path) {
    const char* dir = std::getenv("BUILD_WORKING_DIRECTORY");
    if (!dir || path.empty() || path[0] == '/') return path;
    return std::string(dir) + "/" + path;
}

SanitizeOptions sanitize_options(const CommonOptions& o) {
    SanitizeOptions s;
    s.on = has_flag(o, "--sanitize");
    auto number = [&](const std::string& option, uint64_t max) -> uint64_t {
        const std::string v = value_of(o, option, "");
        char* end = nullptr;
        const unsigned long long n = std::strtoull(v.c_str(), &end, 10);
        if (v.empty() || *end != '\0' || v[0] == '-' || n > max) {
            throw UsageError(option + " takes a whole number up to " + std::to_string(max) + ", not '" + v + "'");
        }
        return n;
    };
    for (const std::string& option : kSanitizeValues) {
        if (!value_of(o, option, "").empty() && !s.on) throw UsageError(option + " is for --sanitize");
    }
    if (!value_of(o, "--error-exitcode", "").empty()) s.error_exitcode = static_cast<int>(number("--error-exitcode", 255));
    if (!value_of(o, "--print-limit", "").empty()) s.print_limit = number("--print-limit", ~uint64_t{0} >> 1);
    s.suppressions = user_path(value_of(o, "--suppressions", ""));
    return s;
}

void apply_sanitize(const SanitizeOptions& s, api::RunRequest& request) {
    request.sanitize = s.on;
    request.suppressions = s.suppressions;
}

}  // namespace pfsim

// Options shared by pfsim's commands, and how they become a Config.
#pragma once

#include <string>
#include <vector>

#include "model/config/config.h"

namespace pfsim {

// Bad command-line input: exit status 2 with the message.
class UsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

struct CommonOptions {
    std::string preset = Config::kDefaultPreset;
    std::vector<std::string> config_files;
    std::vector<std::string> sets;
    bool json = false;
    std::vector<std::string> positional;
};

// Parses the common options; `flags` lists extra boolean flags the command
// accepts (returned in `seen`). Throws UsageError.
CommonOptions parse_options(const std::vector<std::string>& args, const std::vector<std::string>& flags,
                            std::vector<std::string>* seen);
bool has_flag(const std::vector<std::string>& seen, const std::string& flag);

// Preset, then --config files in order, then --set in order; validated.
Config resolve_config(const CommonOptions& options);

// A path as the user meant it: relative to their directory under `bazel run`.
std::string user_path(const std::string& path);

}  // namespace pfsim

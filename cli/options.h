// Options shared by pfsim's commands, and how they become a Config.
#pragma once

#include <map>
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
    std::vector<std::string> flags;                           // extra boolean flags seen
    std::map<std::string, std::vector<std::string>> values;   // extra valued options, in order
};

// Parses the common options plus the command's own: boolean `flags` and
// options taking a value (`valued`, repeatable). Throws UsageError.
CommonOptions parse_options(const std::vector<std::string>& args, const std::vector<std::string>& flags,
                            const std::vector<std::string>& valued = {});
bool has_flag(const CommonOptions& o, const std::string& flag);
// The last value of a valued option, or `fallback`.
std::string value_of(const CommonOptions& o, const std::string& option, const std::string& fallback);

// Preset, then --config files in order, then --set in order; validated.
Config resolve_config(const CommonOptions& options);

// The --preset, --config and --set arguments that give a child run the same
// configuration.
std::vector<std::string> config_args(const CommonOptions& options);

// A path as the user meant it: relative to their directory under `bazel run`.
std::string user_path(const std::string& path);

}  // namespace pfsim

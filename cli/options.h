// Options shared by pfsim's commands, and how they become a Config.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "model/config/config.h"
#include "session/run_spec.h"

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

// --jobs N: a whole number from 1 to 256 (default: the machine's processors);
// throws UsageError otherwise.
unsigned jobs_option(const CommonOptions& o);

// --progress SECONDS between a long run's progress lines (default 10; 0: none),
// in milliseconds; throws UsageError for anything but 0 to 86400 seconds.
int64_t progress_option_ms(const CommonOptions& o);

// The --preset, --config files and --set values, as a run spec carries them.
api::ConfigChoice config_choice(const CommonOptions& options);
// Preset, then --config files in order, then --set in order; validated.
Config resolve_config(const CommonOptions& options);

// The --preset, --config and --set arguments as the user gave them: what a
// batch folder keeps of the command that made it (cli/batch.h).
std::vector<std::string> config_args(const CommonOptions& options);

// The sanitizer's options, shared by run and check: --sanitize,
// --error-exitcode N (the exit status when it reports an error and the run
// passed; default 1, 0 = report only), --print-limit N (findings printed on
// stderr; default 100), --suppressions FILE.
struct SanitizeOptions {
    bool on = false;
    int error_exitcode = 1;
    uint64_t print_limit = 100;
    std::string suppressions;  // as the user gave it (user_path applied)
};
inline const std::vector<std::string> kSanitizeFlags = {"--sanitize"};
inline const std::vector<std::string> kSanitizeValues = {"--error-exitcode", "--print-limit", "--suppressions"};
// Throws UsageError for a value that does not parse, or options without --sanitize.
SanitizeOptions sanitize_options(const CommonOptions& o);
// Asks `request` for the sanitizer these options turn on (the exit code and
// print limit stay with the command that reports).
void apply_sanitize(const SanitizeOptions& s, api::RunRequest& request);

// Output files (--csv, --html, --junit): check_writable at the start of a
// command, so an unwritable path fails before anything runs; write_output at
// the end, which throws UsageError when any byte does not reach the file (a
// full disk). Both name the path. `path` as the user gave it.
void check_writable(const std::string& path);
void write_output(const std::string& path, const std::string& text);

// A path as the user meant it: relative to their directory under `bazel run`.
// Throws UsageError when `output` (the value of `option`) names the same file
// as one of `inputs` (what, path) or one of o's --config files: an output never
// overwrites an input (they are compared by identity, so any spelling is found).
void refuse_overwriting_an_input(const CommonOptions& o, const std::string& option, const std::string& output,
                                 std::vector<std::pair<std::string, std::string>> inputs = {});
std::string user_path(const std::string& path);

}  // namespace pfsim

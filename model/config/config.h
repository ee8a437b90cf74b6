// The resolved configuration: a preset, then overrides from files and --set.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "model/common/tick.h"
#include "model/config/params.h"
#include "model/config/units.h"

namespace pfsim {

// Bad configuration input. The message names the key and, for files, file:line.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The most lines of GM (gm.size / l2.line_bytes) a configuration may have: the
// L2's tag store holds a line number + 1 in 32 bits (model/l2/tag_store.h).
constexpr uint64_t kMaxTaggedLines = 0xFFFFFFFEu;

// The most misses in flight (l2.max_outstanding_misses): the L2's miss
// registers are one calendar's servers (model/common/calendar.h; l2_cache.cc asserts the fit).
constexpr uint64_t kMaxOutstandingMisses = 65535;

class Config {
public:
    static const std::string kDefaultPreset;
    static std::vector<std::string> preset_names();
    // The named embedded preset; it defines every parameter.
    static Config from_preset(const std::string& name = kDefaultPreset);

    // Overrides from a TOML file (any subset of the keys).
    void load_file(const std::string& path);
    // Override from "key=value" (a --set argument).
    void set(const std::string& assignment);
    // Cross-parameter checks (geometry, ranges). Throws ConfigError.
    void validate() const;

    uint64_t count(const std::string& key) const;
    uint64_t bytes(const std::string& key) const;               // Kind::Size
    double bandwidth(const std::string& key) const;             // bytes per second
    Tick time(const std::string& key) const;                    // picoseconds
    double frequency(const std::string& key) const;             // Hz
    const std::string& choice(const std::string& key) const;
    bool flag(const std::string& key) const;

    const std::string& preset() const { return preset_; }
    // A parameter's plausible range (a [ranges] table of a preset or file:
    // "key" = [LOW, HIGH], each a value of the key's kind; for a choice, two
    // alternatives): what `pfsim check --uncertainty` runs each case at.
    struct Range {
        std::string low, high;
        std::string origin;  // "preset a2a3:120"
    };
    const std::map<std::string, Range>& ranges() const { return ranges_; }
    // Every parameter in canonical units (B, B/s, ps, Hz), plus "preset".
    nlohmann::json to_json() const;
    // Every parameter as TOML, with its origin and description as comments.
    std::string to_toml() const;
    // The parameter reference: key, kind, canonical unit, value as set, description.
    std::string to_markdown() const;

    // Parses TOML text from `source` (a file name, or "preset NAME"). A preset
    // (preset = true) may name the preset it changes: extends = "NAME".
    void load_toml(const std::string& text, const std::string& source, bool preset = false);

private:
    struct Setting {
        std::string text;    // as written
        std::string origin;  // where it was set: "file.toml:12", "--set", "preset a2a3:40"
        Quantity quantity;
        bool flag = false;
    };
    // The embedded preset `name`, after the preset it extends (depth: how many
    // presets extend it here).
    void apply_preset(const std::string& name, int depth);
    void assign(const ParamSpec& spec, const std::string& text, const std::string& origin);
    const Setting& get(const std::string& key, Kind kind) const;
    double per_cycle_scale(const Setting& s, double canonical_per_cycle) const;

    std::string preset_;
    std::map<std::string, Setting> settings_;
    std::map<std::string, Range> ranges_;
    void load_ranges(const void* table, const std::string& source);  // a toml::table
};

}  // namespace pfsim

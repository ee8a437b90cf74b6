#include "model/config/config.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <sstream>

#define TOML_EXCEPTIONS 1
#include <toml++/toml.h>

#include "base/toml_text.h"
#include "hw/sdma_registers.h"
#include "hw/sdma_workspace_layout.h"
#include "model/common/peer_window.h"
#include "model/config/presets/presets.h"

namespace pfsim {

const std::string Config::kDefaultPreset = "a2a3";

namespace {

bool is_power_of_two(double v) {
    if (v < 1 || v != std::floor(v)) return false;
    auto u = static_cast<uint64_t>(v);
    return (u & (u - 1)) == 0;
}

std::string format_number(double v) {
    std::ostringstream os;
    if (v == std::floor(v) && std::fabs(v) < 1e18) {
        os << static_cast<int64_t>(v);
    } else {
        os << std::setprecision(12) << v;
    }
    return os.str();
}

std::string toml_scalar_text(const toml::node& node, bool* ok) {
    *ok = true;
    if (auto s = node.as_string()) return s->get();
    if (auto i = node.as_integer()) return std::to_string(i->get());
    if (auto f = node.as_floating_point()) return format_number(f->get());
    if (auto b = node.as_boolean()) return b->get() ? "true" : "false";
    *ok = false;
    return "";
}

std::string at(const std::string& source, const toml::source_region& region) {
    return source + ":" + std::to_string(region.begin.line);
}

}  // namespace

std::vector<std::string> Config::preset_names() {
    std::vector<std::string> names;
    for (const EmbeddedPreset& p : embedded_presets()) names.push_back(p.name);
    return names;
}

Config Config::from_preset(const std::string& name) {
    Config cfg;
    cfg.preset_ = name;
    cfg.apply_preset(name, 0);
    for (const ParamSpec& spec : param_specs()) {
        if (!cfg.settings_.count(spec.key)) throw ConfigError("preset " + name + " does not set " + spec.key);
    }
    return cfg;
}

void Config::apply_preset(const std::string& name, int depth) {
    for (const EmbeddedPreset& p : embedded_presets()) {
        if (name != p.name) continue;
        const std::string source = "preset " + name;
        std::string base;
        try {
            const toml::table root = toml::parse(p.text, source);
            if (const toml::node* e = root.get("extends")) {
                if (!e->is_string()) throw ConfigError(at(source, e->source()) + ": extends: expected a preset name");
                base = e->as_string()->get();
            }
        } catch (const toml::parse_error&) {
            // load_toml reports it with its line
        }
        if (!base.empty()) {
            if (depth >= 8) throw ConfigError(source + ": extends: presets extend each other in a cycle");
            apply_preset(base, depth + 1);
        }
        load_toml(p.text, source, true);
        return;
    }
    std::string known;
    for (const std::string& n : preset_names()) known += (known.empty() ? "" : ", ") + n;
    throw ConfigError("unknown preset '" + name + "' (known: " + known + ")");
}

void Config::load_file(const std::string& path) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec)) throw ConfigError(path + ": is a directory, not a configuration file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw ConfigError(path + ": cannot read the configuration file");
    std::ostringstream text;
    text << in.rdbuf();
    load_toml(text.str(), path);
}

void Config::load_toml(const std::string& text, const std::string& source, bool preset) {
    toml::table root;
    try {
        const std::string problem = toml_text_problem(text);
        if (!problem.empty()) throw ConfigError(source + ":" + problem);
        root = toml::parse(text, source);
    } catch (const toml::parse_error& e) {
        throw ConfigError(source + ":" + std::to_string(e.source().begin.line) + ": " +
                          std::string(e.description()));
    }
    // Walk nested tables; leaves are parameters named by their dotted path.
    std::vector<std::pair<std::string, const toml::table*>> stack = {{"", &root}};
    while (!stack.empty()) {
        auto [prefix, table] = stack.back();
        stack.pop_back();
        for (const auto& [k, node] : *table) {
            std::string key = prefix.empty() ? std::string(k.str()) : prefix + "." + std::string(k.str());
            if (const toml::table* sub = node.as_table()) {
                if (key == "ranges") {
                    load_ranges(sub, source);
                } else {
                    stack.push_back({key, sub});
                }
                continue;
            }
            const std::string where = at(source, node.source());
            if (preset && key == "extends") continue;  // applied by apply_preset
            const ParamSpec* spec = find_param(key);
            if (!spec) throw ConfigError(where + ": unknown key '" + key + "'");
            bool ok = false;
            std::string value = toml_scalar_text(node, &ok);
            if (!ok) throw ConfigError(where + ": " + key + ": expected a single value");
            if (spec->kind == Kind::Flag && !node.is_boolean()) {
                throw ConfigError(where + ": " + key + ": expected true or false");
            }
            if (node.is_boolean() && spec->kind != Kind::Flag) {
                throw ConfigError(where + ": " + key + ": expected a " + kind_name(spec->kind) +
                                  ", got a boolean");
            }
            if (node.is_floating_point() && spec->kind == Kind::Count) {
                throw ConfigError(where + ": " + key + ": expected a whole number");
            }
            assign(*spec, value, where);
        }
    }
}

void Config::load_ranges(const void* table, const std::string& source) {
    for (const auto& [k, node] : *static_cast<const toml::table*>(table)) {
        const std::string key(k.str());
        const std::string where = at(source, node.source());
        const ParamSpec* spec = find_param(key);
        if (!spec) throw ConfigError(where + ": ranges: unknown key '" + key + "'");
        const toml::array* ends = node.as_array();
        if (!ends || ends->size() != 2) throw ConfigError(where + ": ranges: " + key + ": expected [LOW, HIGH]");
        Range r;
        r.origin = where;
        for (size_t i = 0; i < 2; ++i) {
            bool ok = false;
            const std::string text = toml_scalar_text(*ends->get(i), &ok);
            if (!ok) throw ConfigError(where + ": ranges: " + key + ": expected [LOW, HIGH]");
            Config probe = *this;
            probe.assign(*spec, text, where + ": ranges");  // a value of the key's kind, or the error naming it
            (i == 0 ? r.low : r.high) = text;
        }
        ranges_[key] = r;
    }
}

void Config::set(const std::string& assignment) {
    size_t eq = assignment.find('=');
    if (eq == std::string::npos || eq == 0) {
        throw ConfigError("--set " + assignment + ": expected key=value");
    }
    std::string key = assignment.substr(0, eq);
    const ParamSpec* spec = find_param(key);
    if (!spec) throw ConfigError("--set " + assignment + ": unknown key '" + key + "'");
    assign(*spec, assignment.substr(eq + 1), "--set");
}

void Config::assign(const ParamSpec& spec, const std::string& text, const std::string& origin) {
    Setting s;
    s.text = text;
    s.origin = origin;
    auto fail = [&](const std::string& why) {
        throw ConfigError(origin + ": " + spec.key + ": " + why);
    };
    switch (spec.kind) {
        case Kind::Choice: {
            bool known = false;
            std::string list;
            for (const std::string& c : spec.choices) {
                known |= (c == text);
                list += (list.empty() ? "" : ", ") + c;
            }
            if (!known) fail("'" + text + "' is not one of " + list);
            break;
        }
        case Kind::Flag:
            if (text != "true" && text != "false") fail("expected true or false, got '" + text + "'");
            s.flag = (text == "true");
            break;
        default: {
            std::string err = parse_quantity(spec.kind, text, &s.quantity);
            if (!err.empty()) fail(err);
            if (s.quantity.value == 0 && !spec.may_be_zero) fail("must be greater than zero");
            if (spec.power_of_two && !is_power_of_two(s.quantity.value)) {
                fail("'" + text + "' must be a power of two");
            }
        }
    }
    settings_[spec.key] = s;
}

const Config::Setting& Config::get(const std::string& key, Kind kind) const {
    const ParamSpec* spec = find_param(key);
    if (!spec || spec->kind != kind) {
        throw std::logic_error("pfsim: parameter " + key + " read as a " + kind_name(kind));
    }
    auto it = settings_.find(key);
    if (it == settings_.end()) throw std::logic_error("pfsim: parameter " + key + " has no value");
    return it->second;
}

uint64_t Config::count(const std::string& key) const {
    return static_cast<uint64_t>(get(key, Kind::Count).quantity.value);
}

uint64_t Config::bytes(const std::string& key) const {
    return static_cast<uint64_t>(get(key, Kind::Size).quantity.value);
}

double Config::frequency(const std::string& key) const {
    return get(key, Kind::Frequency).quantity.value;
}

double Config::bandwidth(const std::string& key) const {
    const Setting& s = get(key, Kind::Bandwidth);
    return s.quantity.per_cycle ? s.quantity.value * frequency("chip.clock") : s.quantity.value;
}

Tick Config::time(const std::string& key) const {
    const Setting& s = get(key, Kind::Time);
    double ps = s.quantity.per_cycle ? s.quantity.value * 1e12 / frequency("chip.clock")
                                     : s.quantity.value;
    return static_cast<Tick>(std::llround(ps));
}

const std::string& Config::choice(const std::string& key) const {
    return get(key, Kind::Choice).text;
}

bool Config::flag(const std::string& key) const { return get(key, Kind::Flag).flag; }

void Config::validate() const {
    auto fail = [&](const std::string& key, const std::string& why) {
        auto it = settings_.find(key);
        std::string origin = it == settings_.end() ? "" : " (set at " + it->second.origin + ")";
        throw ConfigError(key + ": " + why + origin);
    };
    const uint64_t line = bytes("l2.line_bytes");
    const uint64_t l2_size = bytes("l2.size");
    const uint64_t ways = count("l2.ways");
    if (l2_size % line != 0) fail("l2.size", "is not a whole number of l2.line_bytes lines");
    const uint64_t lines = l2_size / line;
    if (ways > lines) {
        fail("l2.ways", std::to_string(ways) + " ways exceed the " + std::to_string(lines) +
                            " lines of the cache");
    }
    if (lines % ways != 0 || !is_power_of_two(static_cast<double>(lines / ways))) {
        fail("l2.ways", "gives l2.size / (l2.line_bytes x l2.ways) = " + std::to_string(lines) + " / " +
                            std::to_string(ways) + " sets; the set count must be a power of two");
    }
    if (count("l2.slices") > lines / ways) fail("l2.slices", "more slices than sets");
    const uint64_t gm_size = bytes("gm.size");
    if (gm_size % bytes("gm.interleave") != 0) fail("gm.interleave", "does not divide gm.size");
    if (line > gm_size) fail("l2.line_bytes", "larger than gm.size");
    if (gm_size / line > kMaxTaggedLines) {
        fail("gm.size", "has " + std::to_string(gm_size / line) + " lines of l2.line_bytes; the L2's tags number at most " +
                            std::to_string(kMaxTaggedLines) + " (a larger l2.line_bytes or a smaller gm.size)");
    }
    if (l2_size > gm_size) fail("l2.size", "larger than gm.size (the L2 caches GM)");
    const uint64_t dline = bytes("core.dcache_line_bytes"), dways = count("core.dcache_ways");
    if (line % dline != 0) fail("core.dcache_line_bytes", "does not divide l2.line_bytes (a miss reads one L2 line's part)");
    if (dways == 0 || bytes("core.dcache_bytes") % (dline * dways) != 0) {
        fail("core.dcache_ways", "core.dcache_bytes is not a whole number of sets of core.dcache_ways lines of "
                                 "core.dcache_line_bytes");
    }
    if (gm_size > kPeerWindowBytes) fail("gm.size", "at most 1 TiB, the size of a peer die's address window");
    const uint64_t alias = bytes("gm.l2_cache_offset");
    // Its highest value keeps the alias below the peer windows (model/common/peer_window.h).
    if (alias != 0 && (alias < gm_size || alias % 4096 != 0 || alias > kMaxL2CacheOffset)) {
        fail("gm.l2_cache_offset", "must be 0 (no uncached alias) or a multiple of 4 KiB from gm.size to 64 TiB (the alias "
                                   "lies above GM in the host's address space)");
    }
    // Below this a cycle lasts over a microsecond: the simulated times of a
    // kernel (and the run's time) grow beyond what any a2a3 part shows.
    if (frequency("chip.clock") < 1e6) fail("chip.clock", "below 1 MHz");
    if (count("l2.max_outstanding_misses") > kMaxOutstandingMisses) {
        fail("l2.max_outstanding_misses", "must be at most " + std::to_string(kMaxOutstandingMisses));
    }
    if (count("sdma.queue_depth") < 2) fail("sdma.queue_depth", "must be at least 2");
    if (count("sdma.queue_depth") > 65535) fail("sdma.queue_depth", "must fit the 16-bit task id");
    if (bytes("sdma.doorbell_tail_offset") + 4 > SdmaRegister::kHead || bytes("sdma.doorbell_tail_offset") % 4) {
        fail("sdma.doorbell_tail_offset", "must be 4-byte aligned and below 0x100 (the channel's status registers)");
    }
    if (bytes("sdma.doorbell_stride") < SdmaRegister::kBlockBytes) {
        fail("sdma.doorbell_stride", "must be at least 512 B (one channel's registers)");
    }
    if (bytes("sdma.chunk_bytes") < line) fail("sdma.chunk_bytes", "must be at least l2.line_bytes");
    if (bytes("prefetch.request_bytes") > bytes("sdma.max_request_bytes")) {
        fail("prefetch.request_bytes", "exceeds sdma.max_request_bytes");
    }
    if (bytes("sdma.max_request_bytes") > 0xFFFFFFFFull) {
        fail("sdma.max_request_bytes", "exceeds the 32-bit request length field");
    }
    const std::string ring = std::to_string(SdmaFlagRings::kRingBytes) + " B flag-payload ring";
    if (bytes("prefetch.workspace_bytes") < SdmaFlagRings::kStart) {
        fail("prefetch.workspace_bytes", "must be at least " + std::to_string(SdmaFlagRings::kStart / 1024) +
                                             " KiB (the flag-payload rings start there)");
    }
    if (SdmaFlagRings::kStart + count("sdma.channels") * SdmaFlagRings::kRingBytes > bytes("prefetch.workspace_bytes")) {
        fail("prefetch.workspace_bytes", "too small for one " + ring + " per channel");
    }
    if (count("prefetch.max_posts") > SdmaFlagRings::kSlots) {
        fail("prefetch.max_posts", "must be at most " + std::to_string(SdmaFlagRings::kSlots) + " (one " + ring +
                                       " holds " + std::to_string(SdmaFlagRings::kSlots) + " slots)");
    }
    if (count("chip.aiv_cores") != 2 * count("chip.aic_cores")) {
        fail("chip.aiv_cores", "must be twice chip.aic_cores (clusters of 1 cube + 2 vector cores)");
    }
    if (count("chip.aic_cores") == 0) fail("chip.aic_cores", "a chip needs at least one cluster");
}

nlohmann::json Config::to_json() const {
    nlohmann::json j = nlohmann::json::object();
    j["preset"] = preset_;
    for (const ParamSpec& spec : param_specs()) {
        switch (spec.kind) {
            case Kind::Choice: j[spec.key] = choice(spec.key); break;
            case Kind::Flag: j[spec.key] = flag(spec.key); break;
            case Kind::Count: j[spec.key] = count(spec.key); break;
            case Kind::Size: j[spec.key] = bytes(spec.key); break;
            case Kind::Time: j[spec.key] = time(spec.key); break;
            case Kind::Bandwidth: j[spec.key] = bandwidth(spec.key); break;
            case Kind::Frequency: j[spec.key] = frequency(spec.key); break;
        }
    }
    return j;
}

std::string Config::to_toml() const {
    std::ostringstream os;
    os << "# pfsim configuration, resolved from preset " << preset_ << "\n";
    std::string table;
    for (const ParamSpec& spec : param_specs()) {
        const std::string section = spec.key.substr(0, spec.key.find('.'));
        const std::string name = spec.key.substr(spec.key.find('.') + 1);
        if (section != table) {
            os << (table.empty() ? "" : "\n") << "[" << section << "]\n";
            table = section;
        }
        const Setting& s = settings_.at(spec.key);
        std::string value;
        switch (spec.kind) {
            case Kind::Count: value = s.text; break;
            case Kind::Flag: value = s.text; break;
            default: value = "\"" + s.text + "\"";
        }
        std::string canonical;
        if (spec.kind == Kind::Time) canonical = format_number(time(spec.key) / 1e3) + " ns";
        if (spec.kind == Kind::Bandwidth) canonical = format_number(bandwidth(spec.key) / 1e9) + " GB/s";
        if (spec.kind == Kind::Size) canonical = std::to_string(bytes(spec.key)) + " B";
        os << std::left << std::setw(26) << name << " = " << std::setw(14) << value << "  # "
           << spec.description;
        if (!canonical.empty() && canonical != s.text) os << " [= " << canonical << "]";
        os << " (from " << s.origin << ")\n";
    }
    return os.str();
}

std::string Config::to_markdown() const {
    std::ostringstream os;
    os << "| key | kind | " << preset_ << " value | description |\n|---|---|---|---|\n";
    for (const ParamSpec& spec : param_specs()) {
        std::string kind = kind_name(spec.kind);
        if (spec.kind == Kind::Choice) {
            kind += ":";
            for (const std::string& c : spec.choices) kind += " " + c;
        }
        if (spec.power_of_two) kind += ", power of two";
        os << "| `" << spec.key << "` | " << kind << " | " << settings_.at(spec.key).text << " | "
           << spec.description << " |\n";
    }
    return os.str();
}

}  // namespace pfsim

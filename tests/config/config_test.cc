#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "model/config/config.h"
#include "model/config/params.h"
#include "model/config/presets/presets.h"
#include "model/config/units.h"
#include "hw/sdma_registers.h"
#include "hw/sdma_workspace_layout.h"

namespace pfsim {
namespace {

// Runs `f` and returns the ConfigError message it throws ("" if it throws none).
template <typename F>
std::string error_of(F f) {
    try {
        f();
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

std::string write_temp(const std::string& name, const std::string& text) {
    const char* dir = std::getenv("TEST_TMPDIR");
    std::string path = std::string(dir ? dir : "/tmp") + "/" + name;
    std::ofstream(path) << text;
    return path;
}

Config with(const std::string& assignment) {
    Config cfg = Config::from_preset();
    cfg.set(assignment);
    cfg.validate();
    return cfg;
}

TEST(Config, DefaultPresetSetsEveryParameterAndValidates) {
    Config cfg = Config::from_preset();
    EXPECT_EQ(cfg.preset(), "a2a3");
    cfg.validate();
    nlohmann::json j = cfg.to_json();
    for (const ParamSpec& spec : param_specs()) {
        EXPECT_TRUE(j.contains(spec.key)) << spec.key;
        EXPECT_FALSE(spec.description.empty()) << spec.key;
    }
    EXPECT_EQ(cfg.bytes("l2.size"), 192ull << 20);
    EXPECT_EQ(cfg.bytes("l2.line_bytes"), 512u);
    EXPECT_EQ(cfg.count("sdma.channels"), 48u);
    EXPECT_EQ(cfg.count("sdma.queue_depth"), 2048u);
    EXPECT_EQ(cfg.bytes("gm.size"), 64ull << 30);
    EXPECT_DOUBLE_EQ(cfg.bandwidth("gm.bandwidth"), 1.6e12);
    EXPECT_EQ(cfg.time("sdma.request_startup"), 570000u);  // ps (fitted)
    EXPECT_EQ(cfg.choice("l2.index"), "modulo");
}

TEST(Config, EveryPresetSetsEveryKnownKey) {
    for (const std::string& name : Config::preset_names()) {
        EXPECT_NO_THROW(Config::from_preset(name).validate()) << name;
    }
}

// Every value a preset marks GUESS or FITTED has a plausible range in the
// preset (its [ranges] table), each end a valid value, with its reason.
TEST(Config, EveryGuessedOrFittedValueHasARangeWithItsReason) {
    for (const EmbeddedPreset& p : embedded_presets()) {
        const Config cfg = Config::from_preset(p.name);
        std::istringstream text(p.text);
        std::string section, line;
        int guessed = 0;
        bool in_ranges = false;
        while (std::getline(text, line)) {
            if (line.rfind("[", 0) == 0) {
                section = line.substr(1, line.find(']') - 1);
                in_ranges = section == "ranges";
                continue;
            }
            if (in_ranges && line.rfind("\"", 0) == 0) {
                EXPECT_NE(line.find("# "), std::string::npos) << p.name << ": a range without its reason: " << line;
                continue;
            }
            const size_t eq = line.find(" = ");
            if (eq == std::string::npos || line[0] == '#') continue;
            if (line.find("# GUESS") == std::string::npos && line.find("# FITTED") == std::string::npos) continue;
            const std::string key = section + "." + line.substr(0, line.find_first_of(" =", 0));
            ++guessed;
            EXPECT_TRUE(cfg.ranges().count(key)) << p.name << ": " << key << " is GUESS or FITTED but has no range";
        }
        if (std::string(p.name) == "a2a3") {
            EXPECT_GT(guessed, 30);
        }
        for (const auto& [key, range] : cfg.ranges()) {  // each end is a configuration that validates
            for (const std::string& end : {range.low, range.high}) {
                Config c = cfg;
                c.set(key + "=" + end);
                EXPECT_NO_THROW(c.validate()) << p.name << ": " << key << " = " << end;
            }
        }
    }
    EXPECT_EQ(Config::from_preset("a2a3-2026-07").ranges().at("l2.ways").low, "6");  // inherited with extends
}

TEST(Config, ABadRangeNamesTheKeyFileAndLine) {
    const std::pair<std::string, std::string> cases[] = {
        {"[ranges]\n\"l2.nosuch\" = [1, 2]\n", "unknown key 'l2.nosuch'"},
        {"[ranges]\n\"l2.ways\" = [1]\n", "l2.ways: expected [LOW, HIGH]"},
        {"[ranges]\n\"gm.read_latency\" = [\"1 us\", \"3 parsecs\"]\n", "gm.read_latency"},
        {"[ranges]\n\"l2.replacement\" = [\"lru\", \"fifo\"]\n", "'fifo' is not one of"},
    };
    for (const auto& [toml, what] : cases) {
        const std::string path = write_temp("bad_range.toml", toml);
        Config cfg = Config::from_preset();
        const std::string e = error_of([&] { cfg.load_file(path); });
        EXPECT_NE(e.find(path + ":2"), std::string::npos) << toml << " -> " << e;
        EXPECT_NE(e.find(what), std::string::npos) << toml << " -> " << e;
    }
}

TEST(Config, EachPtoIsaGenerationHasAPreset) {
    // The default follows the PTO-ISA simpler pins (prefetch-protocol.md §7);
    // the older generation extends it, changing only the prefetch runtime.
    const Config today = Config::from_preset();
    EXPECT_EQ(today.choice("prefetch.protocol"), "2026-08");
    EXPECT_EQ(today.bytes("prefetch.request_bytes"), 64ull << 20);
    const Config older = Config::from_preset("a2a3-2026-07");
    EXPECT_EQ(older.choice("prefetch.protocol"), "2026-07");
    EXPECT_EQ(older.bytes("prefetch.request_bytes"), 1ull << 20);
    nlohmann::json a = today.to_json(), b = older.to_json();
    for (const char* k : {"preset", "prefetch.protocol", "prefetch.request_bytes"}) {
        EXPECT_NE(a[k], b[k]) << k;
        a.erase(k);
        b.erase(k);
    }
    EXPECT_EQ(a, b);
    EXPECT_NE(older.to_toml().find("(from preset a2a3:"), std::string::npos);  // inherited keys say where from
    EXPECT_THROW(with("prefetch.protocol=2025-01"), ConfigError);
}

TEST(Config, UnitSuffixes) {
    EXPECT_EQ(with("l2.size=96MiB").bytes("l2.size"), 96ull << 20);
    EXPECT_EQ(with("gm.interleave=4 KiB").bytes("gm.interleave"), 4096u);
    EXPECT_EQ(with("sdma.max_request_bytes=160MB").bytes("sdma.max_request_bytes"), 160000000u);
    EXPECT_DOUBLE_EQ(with("gm.bandwidth=2TB/s").bandwidth("gm.bandwidth"), 2e12);
    EXPECT_DOUBLE_EQ(with("gm.bandwidth=100 GiB/s").bandwidth("gm.bandwidth"), 100.0 * (1 << 30));
    EXPECT_EQ(with("l2.hit_latency=25ns").time("l2.hit_latency"), 25000u);
    EXPECT_EQ(with("sdma.cold_channel_cost=92us").time("sdma.cold_channel_cost"), 92000000u);
    EXPECT_EQ(with("sdma.cold_channel_cost=1ms").time("sdma.cold_channel_cost"), 1000000000u);
    // Cycles and bytes per cycle follow chip.clock, whatever order they are set in.
    Config cfg = Config::from_preset();
    cfg.set("l2.hit_latency=100cycles");
    cfg.set("chip.clock=1GHz");
    cfg.set("gm.bandwidth=64 B/cycle");
    EXPECT_EQ(cfg.time("l2.hit_latency"), 100000u);
    EXPECT_DOUBLE_EQ(cfg.bandwidth("gm.bandwidth"), 64e9);
}

TEST(Config, UnknownKeyIsRefusedFromSetAndFile) {
    EXPECT_NE(error_of([] { with("l2.sise=1MiB"); }).find("unknown key 'l2.sise'"), std::string::npos);
    const std::string path = write_temp("unknown.toml", "[l2]\nways = 12\n\n[gm]\nbogus = 3\n");
    Config cfg = Config::from_preset();
    const std::string e = error_of([&] { cfg.load_file(path); });
    EXPECT_NE(e.find(path + ":5"), std::string::npos) << e;
    EXPECT_NE(e.find("gm.bogus"), std::string::npos) << e;
}

TEST(Config, WrongTypeNamesKeyFileAndLine) {
    struct Case {
        std::string toml, key;
        int line;
    };
    const Case cases[] = {
        {"[l2]\nways = \"twelve\"\n", "l2.ways", 2},
        {"[l2]\nways = 12.5\n", "l2.ways", 2},
        {"[l2]\n\nsize = true\n", "l2.size", 3},
        {"[l2]\nindex = \"random\"\n", "l2.index", 2},
        {"[gm]\nbandwidth = 1600\n", "gm.bandwidth", 2},   // no unit
        {"[gm]\nread_latency = \"3 parsecs\"\n", "gm.read_latency", 2},
        {"[gm]\nchannels = [1, 2]\n", "gm.channels", 2},
    };
    for (const Case& c : cases) {
        const std::string path = write_temp("wrong_type.toml", c.toml);
        Config cfg = Config::from_preset();
        const std::string e = error_of([&] { cfg.load_file(path); });
        EXPECT_NE(e.find(path + ":" + std::to_string(c.line)), std::string::npos) << c.toml << " -> " << e;
        EXPECT_NE(e.find(c.key), std::string::npos) << c.toml << " -> " << e;
    }
}

TEST(Config, TomlSyntaxErrorNamesFileAndLine) {
    const std::string path = write_temp("syntax.toml", "[l2]\nways = 12\n[gm\n");
    Config cfg = Config::from_preset();
    EXPECT_NE(error_of([&] { cfg.load_file(path); }).find(path + ":3"), std::string::npos);
    EXPECT_NE(error_of([&] { cfg.load_file("/nonexistent/x.toml"); }).find("/nonexistent/x.toml"),
              std::string::npos);
}

// Characters beyond ASCII are TOML only in strings and comments; elsewhere
// toml++ 3.3.0 reaches undefined behaviour (base/toml_text.h), so they are
// refused first, naming the line.
TEST(Config, NonAsciiOutsideStringsIsRefusedWithItsLine) {
    Config cfg = Config::from_preset();
    const std::string bad = write_temp("key.toml", "[l2]\nways = 12\nsize\xc2\xa7 = 3\n");
    EXPECT_NE(error_of([&] { cfg.load_file(bad); }).find(bad + ":3: a non-ASCII character outside a string"),
              std::string::npos)
        << error_of([&] { cfg.load_file(bad); });
    const std::string after_backslash =
        write_temp("ml.toml", "# \xc3\xa9\n[sdma]\nfrontend = \"\"\"tlm\\\n  \xc3\xa9\"\"\"\n");
    EXPECT_NE(error_of([&] { cfg.load_file(after_backslash); })
                  .find(":4: a non-ASCII character right after a line-ending backslash"),
              std::string::npos)
        << error_of([&] { cfg.load_file(after_backslash); });
    // Negative controls: the same characters in comments and strings are read.
    const std::string fine = write_temp("fine.toml", "# caf\xc3\xa9 \xc2\xa7\n[sdma]\nfrontend = \"tlm\" # \xc2\xa7\n");
    EXPECT_NO_THROW(cfg.load_file(fine));
    const std::string literal = write_temp("literal.toml", "[sdma]\nfrontend = '''t\xc3\xa9'''\n");
    const std::string e = error_of([&] { cfg.load_file(literal); });
    EXPECT_EQ(e.find("non-ASCII"), std::string::npos) << e;  // read, then refused as a choice
    EXPECT_NE(e.find("sdma.frontend"), std::string::npos) << e;
}

// After a backslash in a multi-line basic string, with or without spaces
// between, toml++ tests the next character for whitespace too (fuzz
// regression fuzz/regressions/case_fuzz/backslash-nonascii.toml).
TEST(Config, NonAsciiAfterABackslashInAMultiLineStringIsRefused) {
    Config cfg = Config::from_preset();
    for (const char* text : {"[sdma]\nfrontend = \"\"\"\\\xe3\x80\x80\"\"\"\n",
                             "[sdma]\nfrontend = \"\"\"\\ \xe3\x80\x80\"\"\"\n"}) {
        const std::string path = write_temp("escape.toml", text);
        EXPECT_NE(error_of([&] { cfg.load_file(path); })
                      .find(path + ":2: a non-ASCII character after a backslash in a multi-line string"),
                  std::string::npos)
            << error_of([&] { cfg.load_file(path); });
    }
    // Negative control: after an escaped backslash the same character is text.
    const std::string fine = write_temp("fine.toml", "[sdma]\nfrontend = \"\"\"\\\\\xef\xad\x90\"\"\"\n");
    EXPECT_EQ(error_of([&] { cfg.load_file(fine); }).find("non-ASCII"), std::string::npos);
}

// toml++ scans a bare value up to its first terminator, across quotes, and
// tests each character for whitespace (fuzz/regressions/config_fuzz: a
// Cyrillic letter inside a quote that began in the middle of a number).
TEST(Config, NonAsciiInABareValueIsRefusedEvenAfterAQuote) {
    Config cfg = Config::from_preset();
    for (const char* text : {"[l2]\nsize = 12\"\xd0\xbc\"\n", "[l2]\nsize = [1, 2'x\xd0\xbc]\n",
                             "[l2]\nsize = { a = -3\"\xe2\xb2\xa0\" }\n"}) {
        const std::string e = error_of([&] { cfg.load_toml(text, "value.toml"); });
        EXPECT_NE(e.find("value.toml:2: a non-ASCII character in a bare value"), std::string::npos) << e;
    }
    // A form feed or vertical tab where a value starts ends the check's scan
    // at once (fuzz regressions timeout-*: the first version looped on it).
    for (const char* text : {"a = \f1\n", "a = [1, \v]\n"}) {
        EXPECT_NE(error_of([&] { cfg.load_toml(text, "value.toml"); }).find("value.toml:1"), std::string::npos);
    }
    // Negative controls: the same letter in a quoted value, key or header is read.
    for (const char* text : {"[l2]\nsize = \"\xd0\xbc\"\n", "[l2]\n\"\xd0\xbc\" = [1, '\xd0\xbc']\n",
                             "[t.\"\xd0\xbc\"]\nx = { \"\xd0\xbc\" = 1, b = '\xd0\xbc' }\n"}) {
        const std::string e = error_of([&] { cfg.load_toml(text, "value.toml"); });
        EXPECT_EQ(e.find("non-ASCII"), std::string::npos) << text << " -> " << e;
    }
}

// Characters toml++ 3.3.0 mis-tests for whitespace (one from each of its
// three bad ranges) and three it tests rightly, inserted at every offset of
// documents with every string form and a bare value with quotes in it, alone
// and after "\" and "\ ": whatever the check lets through must parse or be
// refused without undefined behaviour. Meaningful under --config=sanitize
// (CI), where UBSan aborts.
TEST(Config, EveryInsertedNonAsciiCharacterIsRefusedOrParsedSafely) {
    const std::string docs[] = {
        "# c\n[sdma]\nfrontend = \"\"\"x\\\n  y\"\"\"\nb = \"\"\"\\\\ q \\t\"\"\"\n"
        "c = '''lit\\'''\n\"k y\" = 'v'\n[t.\"q\"]\nd = [ \"s\", 1 ] # c\n",
        "a = { b = 1, c = [2, 'x'] }\nd = 12\"q,r\" 'x'\n",
    };
    // Each text is read over its own copy of one preset: parsing the preset
    // again for each of the ~3,500 texts was nearly all of the test's time.
    const Config preset = Config::from_preset();
    int refused = 0, read = 0;
    for (const std::string& doc : docs) {
        for (size_t at = 0; at <= doc.size(); ++at) {
            for (const char* c : {"\xd0\xbc", "\xe2\xb2\xa0", "\xef\xad\x90", "\xef\xbb\xbe", "\xc2\xa0",
                                  "\xe3\x80\x80"}) {
                for (const char* before : {"", "\\", "\\ "}) {
                    std::string text = doc;
                    text.insert(at, std::string(before) + c);
                    Config cfg = preset;
                    const std::string e = error_of([&] { cfg.load_toml(text, "inserted.toml"); });
                    (e.find("non-ASCII") != std::string::npos ? refused : read) += 1;
                }
            }
        }
    }
    EXPECT_GT(refused, 0);
    EXPECT_GT(read, 0);
}

TEST(Config, ImpossibleValuesNameTheKey) {
    const std::pair<std::string, std::string> cases[] = {
        {"l2.ways=16", "l2.ways"},                // 393216 / 16 sets: not a power of two
        {"l2.ways=1000000", "l2.ways"},           // more ways than lines
        {"l2.size=1000", "l2.size"},              // not a whole number of lines
        {"l2.line_bytes=384", "l2.line_bytes"},   // not a power of two
        {"l2.slices=3", "l2.slices"},
        {"gm.bandwidth=0GB/s", "gm.bandwidth"},   // zero bandwidth
        {"sdma.bandwidth=0 B/s", "sdma.bandwidth"},
        {"gm.channels=0", "gm.channels"},
        {"gm.size=3GiB", "gm.size"},
        {"gm.size=4TiB", "the L2's tags number at most"},  // 2^33 lines of 512 B
        {"sdma.queue_depth=1", "sdma.queue_depth"},
        {"l2.max_outstanding_misses=65536", "l2.max_outstanding_misses"},  // one calendar's servers
        {"sdma.doorbell_tail_offset=6", "sdma.doorbell_tail_offset"},
        {"prefetch.request_bytes=512MiB", "prefetch.request_bytes"},
        {"chip.clock=-1MHz", "chip.clock"},
        {"sdma.provider=maybe", "sdma.provider"},
        {"l2.size", "l2.size"},                   // no value at all
        {"gm.l2_cache_offset=1GiB", "gm.l2_cache_offset"},       // the alias would overlap GM
        {"gm.l2_cache_offset=0x1000000001", "gm.l2_cache_offset"},  // not whole pages
        {"gm.l2_cache_offset=0x400000001000", "gm.l2_cache_offset"},  // 4 KiB above 64 TiB: into the peer windows' plan
        {"core.dcache_ways=3", "core.dcache_ways"},                 // 256 lines are not sets of 3
        {"core.dcache_ways=0", "core.dcache_ways"},
        {"core.dcache_line_bytes=1KiB", "core.dcache_line_bytes"},  // wider than an L2 line
        {"core.dcache_line_bytes=48", "core.dcache_line_bytes"},    // not a power of two
        {"core.dcache=yes", "core.dcache"},                         // a flag: true or false
        {"core.dcache_replacement=fifo", "core.dcache_replacement"},
    };
    for (const auto& [assignment, key] : cases) {
        const std::string e = error_of([&] { with(assignment); });
        EXPECT_NE(e.find(key), std::string::npos) << assignment << " -> '" << e << "'";
    }
}

// The highest alias the address plan leaves below the peer windows, and the
// largest GM, one window (model/common/peer_window.h), are taken; one page
// above the alias (above) and twice the GM are refused.
TEST(Config, GmAndItsAliasAtTheirLimitsAreTaken) {
    EXPECT_EQ(with("gm.l2_cache_offset=0x400000000000").bytes("gm.l2_cache_offset"), uint64_t{64} << 40);
    EXPECT_EQ(with("gm.size=1TiB").bytes("gm.size"), uint64_t{1} << 40);  // one peer window, the largest GM
    // Twice that, in lines the L2's tags can still number, is refused naming the window.
    Config twice = Config::from_preset();
    twice.set("l2.line_bytes=1KiB");
    twice.set("gm.size=2TiB");
    EXPECT_NE(error_of([&] { twice.validate(); }).find("gm.size: at most 1 TiB, the size of a peer die's address window"),
              std::string::npos)
        << error_of([&] { twice.validate(); });
}

// A channel's doorbell lies below its status registers and two channels'
// register blocks never overlap (hw/sdma_registers.h): the last doorbell slot
// and the smallest block are taken, one step past either is refused.
TEST(Config, SdmaRegisterBlockAtItsLimits) {
    EXPECT_EQ(with("sdma.doorbell_tail_offset=0xFC").bytes("sdma.doorbell_tail_offset"), SdmaRegister::kHead - 4);
    EXPECT_NE(error_of([&] { with("sdma.doorbell_tail_offset=0x100"); }).find("sdma.doorbell_tail_offset"),
              std::string::npos);
    EXPECT_EQ(with("sdma.doorbell_stride=512B").bytes("sdma.doorbell_stride"), SdmaRegister::kBlockBytes);
    EXPECT_NE(error_of([&] { with("sdma.doorbell_stride=256B"); }).find("sdma.doorbell_stride"), std::string::npos);
}

// The flag-payload rings' place in the SDMA workspace (hw/sdma_workspace_layout.h):
// a workspace holding exactly one ring per channel after their start, and as
// many posts outstanding as a ring has slots, are taken; a byte or a post
// more is refused naming the key.
TEST(Config, SdmaWorkspaceAtItsLimits) {
    const uint64_t channels = Config::from_preset().count("sdma.channels");
    const uint64_t fits = SdmaFlagRings::kStart + channels * SdmaFlagRings::kRingBytes;
    const std::string at = "prefetch.workspace_bytes=" + std::to_string(fits) + "B";
    EXPECT_EQ(with(at).bytes("prefetch.workspace_bytes"), fits);
    const std::string under = "prefetch.workspace_bytes=" + std::to_string(fits - 1) + "B";
    EXPECT_NE(error_of([&] { with(under); }).find("prefetch.workspace_bytes: too small for one 512 B flag-payload ring"),
              std::string::npos)
        << error_of([&] { with(under); });
    EXPECT_EQ(with("prefetch.max_posts=" + std::to_string(SdmaFlagRings::kSlots)).count("prefetch.max_posts"),
              SdmaFlagRings::kSlots);
    const std::string over = "prefetch.max_posts=" + std::to_string(SdmaFlagRings::kSlots + 1);
    EXPECT_NE(error_of([&] { with(over); }).find("prefetch.max_posts: must be at most 64 (one 512 B flag-payload ring holds 64 slots)"),
              std::string::npos)
        << error_of([&] { with(over); });
}

TEST(Config, UnknownPresetListsTheKnownOnes) {
    const std::string e = error_of([] { Config::from_preset("a9"); });
    EXPECT_NE(e.find("a9"), std::string::npos);
    EXPECT_NE(e.find("a2a3"), std::string::npos);
}

TEST(Config, OverridesApplyInOrderAndRecordTheirOrigin) {
    const std::string path = write_temp("override.toml", "[l2]\nways = 24\n");
    Config cfg = Config::from_preset();
    cfg.load_file(path);
    EXPECT_EQ(cfg.count("l2.ways"), 24u);
    cfg.set("l2.ways=6");
    cfg.validate();
    EXPECT_EQ(cfg.count("l2.ways"), 6u);
    EXPECT_NE(cfg.to_toml().find("(from --set)"), std::string::npos);
}

TEST(Units, ParseQuantity) {
    Quantity q;
    EXPECT_EQ(parse_quantity(Kind::Size, "0x1000", &q), "");
    EXPECT_EQ(q.value, 4096);
    EXPECT_NE(parse_quantity(Kind::Size, "1.5 B", &q), "");
    EXPECT_NE(parse_quantity(Kind::Count, "3 MiB", &q), "");
    EXPECT_NE(parse_quantity(Kind::Time, "", &q), "");
    EXPECT_EQ(parse_quantity(Kind::Time, "3cycles", &q), "");
    EXPECT_TRUE(q.per_cycle);
    // Values held as 64-bit integers are bounded before they are converted (config_fuzz,
    // 2026-12-03: l2.size=41177771111111111118MiB reached a double -> uint64 overflow).
    EXPECT_NE(parse_quantity(Kind::Size, "41177771111111111118MiB", &q).find("too large"), std::string::npos);
    EXPECT_NE(parse_quantity(Kind::Size, "18446744073709551616", &q).find("too large"), std::string::npos);
    EXPECT_NE(parse_quantity(Kind::Size, "16777216TiB", &q).find("too large"), std::string::npos);  // 2^64
    EXPECT_EQ(parse_quantity(Kind::Size, "16777215TiB", &q), "");
    EXPECT_NE(parse_quantity(Kind::Count, "1e20", &q).find("too large"), std::string::npos);
    EXPECT_NE(parse_quantity(Kind::Time, "1e9 s", &q).find("too long"), std::string::npos);
}

}  // namespace
}  // namespace pfsim

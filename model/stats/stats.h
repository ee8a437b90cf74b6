// The statistics a hardware block keeps, each declared once with its unit and
// meaning. A block lists its stats in one X-list and PFSIM_STATS turns it into
//
//   - a plain struct of uint64_t counters the block adds to (copyable: a copy is
//     a snapshot, `after - before` is what happened in between), and
//   - the table of every stat's name, unit and description, which is what the
//     JSON summary, the deltas and the stats reference (`pfsim stats`) are
//     built from.
//
// An X-list entry is COUNTER(name, unit, description) for a counter, or
// FORMULA(name, unit, description, expression) for a value derived from the
// counters, where the expression reads them as `s.counter`:
//
//   COUNTER(hits, "lines", "demand line accesses that found the line")
//   FORMULA(hit_rate, "ratio", "hits / (hits + misses)", ratio(s.hits, s.hits + s.misses))
//
// in a macro PFSIM_L2_STATS(COUNTER, FORMULA), then
//   PFSIM_STATS(L2Stats, PFSIM_L2_STATS)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pfsim {

struct StatInfo {
    std::string name;
    std::string unit;  // "lines", "bytes", "requests", "ps", "count", "ratio"
    std::string description;
    bool derived = false;  // a formula over the counters, not a counter
};

// One row of a block's table: a counter (member) or a formula (derive).
template <class Stats>
struct StatField {
    StatInfo info;
    uint64_t Stats::*member = nullptr;
    double (*derive)(const Stats&) = nullptr;
};

inline double ratio(uint64_t part, uint64_t whole) {
    return whole ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

// The counters and formulas of `s` as one JSON object.
template <class Stats>
nlohmann::json stats_json(const Stats& s) {
    nlohmann::json j = nlohmann::json::object();
    for (const StatField<Stats>& f : Stats::fields()) {
        if (f.member) {
            j[f.info.name] = s.*f.member;
        } else {
            j[f.info.name] = f.derive(s);
        }
    }
    return j;
}

// What the counters counted between two snapshots (formulas then follow).
template <class Stats>
Stats stats_delta(const Stats& after, const Stats& before) {
    Stats d;
    for (const StatField<Stats>& f : Stats::fields()) {
        if (f.member) d.*f.member = after.*f.member - before.*f.member;
    }
    return d;
}

// The infos of a block's table, for the stats reference.
template <class Stats>
std::vector<StatInfo> stat_infos() {
    std::vector<StatInfo> out;
    for (const StatField<Stats>& f : Stats::fields()) out.push_back(f.info);
    return out;
}

}  // namespace pfsim

#define PFSIM_STAT_MEMBER_(name, unit, description) uint64_t name = 0;
#define PFSIM_STAT_NO_MEMBER_(name, unit, description, expression)
#define PFSIM_STAT_COUNTER_ROW_(name, unit, description) {{#name, unit, description, false}, &Self::name, nullptr},
#define PFSIM_STAT_FORMULA_ROW_(name, unit, description, expression) \
    {{#name, unit, description, true}, nullptr, [](const Self& s) -> double { return (expression); }},

#define PFSIM_STATS(Type, LIST)                                                                 \
    struct Type {                                                                               \
        LIST(PFSIM_STAT_MEMBER_, PFSIM_STAT_NO_MEMBER_)                                         \
        static const std::vector<::pfsim::StatField<Type>>& fields() {                          \
            using Self = Type;                                                                  \
            static const std::vector<::pfsim::StatField<Type>> rows = {                         \
                LIST(PFSIM_STAT_COUNTER_ROW_, PFSIM_STAT_FORMULA_ROW_)};                        \
            return rows;                                                                        \
        }                                                                                       \
    };

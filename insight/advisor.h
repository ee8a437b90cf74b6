// The prefetch advisor (`pfsim run|check ... --advise`): per prefetch call
// site, what its lines did in L2 — filled, used, late, evicted unused, the
// demand misses it caused — with Feedback-Directed Prefetching's names and
// denominators, and findings ranked by what they may gain (docs/advisor.md).
//
// Contract: construct it on a platform before the run and call finish() after;
// while it lives it observes the prefetch runtime and L2. It changes nothing
// the run computes or times.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include <nlohmann/json.hpp>

#include "insight/call_log.h"
#include "model/core/core_observer.h"
#include "model/l2/l2_observer.h"
#include "runtime/prefetch.h"

namespace pfsim {
class SimPlatform;
}

namespace pfsim::insight {

// FDP's thresholds (Srinath et al., HPCA 2007): accuracy high / low, lateness, pollution.
struct AdvisorThresholds {
    double accuracy_high = 0.75, accuracy_low = 0.40, lateness = 0.01, pollution = 0.005;
    // A load site is advised a prefetch when at least this share of its lines miss...
    double load_miss_rate = 0.5;
    // ...and its loads' data came this much later than the rate alone, per core.
    double load_stall_ns = 1000;
    // A prefetch site is called costly when its posts held each of its cores this long.
    double post_ns = 10000;
    // A load site is advised to read around the L2 instead when at most this
    // share of the lines it allocated were read again, and its allocations
    // evicted lines a later access missed.
    double load_reuse = 0.01;
};

struct PrefetchSiteStats {
    std::string where;         // "kernel.cpp:61" ("" unknown)
    std::vector<std::string> cores;
    std::vector<std::string> tasks;  // the tasks whose kernels posted ("task 2 (aiv, func 1)"), when in a graph
    double first_post_ns = 0;      // since the run began
    uint64_t posts = 0, bytes = 0;
    uint64_t lines_requested = 0;  // lines of the regions posted
    uint64_t lines_filled = 0;     // brought into L2
    uint64_t lines_resident = 0;   // found there already
    uint64_t useful = 0;           // filled lines a core then accessed
    uint64_t late = 0;             // useful lines still being filled when first needed (by an access or a wait)
    uint64_t evicted_unused = 0;   // filled lines evicted before any access
    uint64_t pollution_misses = 0; // demand misses on lines this site's fills evicted
    double post_ns = 0;            // cores' time posting
    double wait_ns = 0;            // cores' time in Wait/Test of this site's events
    std::vector<double> fill_ns;   // per filled line: post -> in L2
    std::vector<double> lead_ns;   // per useful line: in L2 -> first use (negative: late by that much)
    double accuracy() const { return lines_filled ? double(useful) / double(lines_filled) : 0; }
    double lateness() const { return useful ? double(late) / double(useful) : 0; }
};

// A TLOAD call site: what its loads met in L2 and which prefetches served them.
struct LoadSiteStats {
    std::string where;  // "kernel.cpp:54" ("" unknown)
    std::vector<std::string> cores, tasks;
    uint64_t loads = 0, bytes = 0;
    uint64_t lines = 0;   // line accesses its loads made
    uint64_t misses = 0;  // of them, demand misses
    uint64_t around = 0;  // of them, reads around the L2 (through GM's uncached alias)
    uint64_t allocated = 0;  // lines its misses brought into L2
    uint64_t reused = 0;     // of them, lines some core access found there later
    uint64_t pollution_misses = 0;  // demand misses on lines its allocations evicted
    double stall_ns = 0;  // summed over its loads: how much later their data came than the MTE2 rate alone brings it
    // Prefetch site -> lines of these loads that were the first use of a line it filled.
    std::map<std::string, uint64_t> covered_by;
    double miss_rate() const { return lines ? double(misses) / double(lines) : 0; }
    double reuse() const { return allocated ? double(reused) / double(allocated) : 0; }
};

struct Advice {
    std::string where;  // the site
    // drop, earlier, pollutes, redundant, costly; for a load site: prefetch,
    // bypass; on several dies: delays_comm (its posts were ahead of copies
    // between dies in an SDMA ring)
    std::string verdict;
    std::string message;
    double estimated_gain_ns = 0;  // per core, a heuristic (docs/advisor.md says which); 0: not estimated
    // Measured: the same run with this site's prefetches removed (run --advise).
    bool measured = false;
    double without_ns = 0;
    double measured_gain_ns(double this_run_ns) const { return this_run_ns - without_ns; }
    // Measured: the same run with the site's lines resident at no cost -- a
    // prefetch site's regions at each post, a load site's at each load.
    bool resident_measured = false;
    double resident_ns = 0;
    // Measured: the same run with the load site's loads reading around the L2.
    bool around_measured = false;
    double around_ns = 0;
    // delays_comm: how long the run's copies between dies waited behind
    // prefetches in their rings (sdma.comm_prefetch_wait, every die), and,
    // measured, the same without this site's prefetches.
    double comm_wait_ns = 0;
    bool comm_measured = false;
    double without_comm_wait_ns = 0;
};

// Re-runs made for the report: the same inputs, so the differences are exact.
struct WhatIf {
    bool measured = false;
    double prefetch_off_ns = 0;  // the run with every prefetch a no-op
    double this_run_ns = 0;      // the run the report is about
    double ideal_ns = 0;         // prefetch off, every core access served as an L2 hit (l2.demand = ideal)
    double gain_pct() const { return prefetch_off_ns > 0 ? 100 * (prefetch_off_ns - this_run_ns) / prefetch_off_ns : 0; }
    // The upper bound of what any prefetch can gain.
    double ideal_gain_pct() const { return prefetch_off_ns > 0 ? 100 * (prefetch_off_ns - ideal_ns) / prefetch_off_ns : 0; }
};

struct AdvisorReport {
    std::vector<PrefetchSiteStats> sites;  // by the site's first post
    std::vector<LoadSiteStats> load_sites;  // by stall, most first
    uint64_t demand_misses = 0;            // every core access that missed L2
    AdvisorThresholds thresholds;
    // A run on several dies (> 1): the report holds the communication advice
    // only (delays_comm); the per-site L2 counts are not made on several dies.
    uint32_t ranks = 1;
    std::vector<Advice> advice;            // ranked by estimated gain
    WhatIf what_if;                        // filled by the caller that made the re-runs
    double pollution(const PrefetchSiteStats& s) const {
        return demand_misses ? double(s.pollution_misses) / double(demand_misses) : 0;
    }
    std::string text() const;
    nlohmann::json to_json() const;
    // Throws nlohmann::json::exception on a document that is not one.
    static AdvisorReport from_json(const nlohmann::json& j);

private:
    // The what-if line (several dies) and the advice, after what `os` holds.
    std::string advice_text(std::ostringstream& os) const;
};

// A task of the run's graph as the advisor weighs it.
struct TaskSpan {
    std::string name;  // "task 2 (aiv, func 1)"
    double start_ns = 0, end_ns = 0;
    std::vector<uint32_t> deps;  // earlier tasks' indices
};

// How long each task could have ended later without delaying the graph's end
// (its total float over the observed schedule: to its successors' starts,
// and theirs on to the end).
std::vector<double> task_slack_ns(const std::vector<TaskSpan>& tasks);

// An advice's estimate counts only if a task it was posted from lies on the
// graph's critical path (slack within 1 % of the graph's time): an advice
// whose every task had slack estimates 0 and says how much slack there was.
void weigh_by_critical_path(AdvisorReport& report, const std::vector<TaskSpan>& tasks);

class Advisor : public rt::PrefetchObserver, public L2Observer, public CoreObserver {
public:
    explicit Advisor(SimPlatform& platform, AdvisorThresholds thresholds = {});
    ~Advisor() override;
    Advisor(const Advisor&) = delete;
    Advisor& operator=(const Advisor&) = delete;

    AdvisorReport finish();

    // rt::PrefetchObserver
    void publishing(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                    uint64_t since_ps) override;
    void posted(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                uint64_t since_ps) override;
    void waited(const rt::AsyncEvent& evt, const rt::AsyncSession& session, bool done, bool test,
                uint64_t since_ps) override;
    // L2Observer
    void prefetched(uint64_t line, bool filled, Tick issue, Tick ready) override;
    void demand(uint64_t line, bool write, bool hit, bool first_touch, Tick start, Tick ready, bool around) override;
    void evicted(uint64_t victim, bool untouched, bool by_prefetch, uint64_t line) override;
    // CoreObserver: the loads, by call site
    void transfer_started(Core& core, bool write, uint64_t gm, uint64_t bytes) override;
    void transfer_ended(Core& core, bool write, uint64_t gm, uint64_t bytes, Tick stall_ps) override;

private:
    static constexpr Tick kNever = ~Tick{0};
    struct Post {
        size_t call = 0;
        uint64_t id = 0, first_line = 0, last_line = 0, bytes = 0;
        Tick posted = 0, post_ps = 0, first_wait = kNever, wait_ps = 0;
        uint64_t filled = 0, resident = 0, useful = 0, late = 0, evicted_unused = 0, pollution = 0;
        std::vector<double> fill_ns, lead_ns;
    };
    struct Line {
        size_t post = 0;
        Tick ready = 0;
    };
    struct Load {
        size_t call = 0;
        uint64_t bytes = 0, lines = 0, misses = 0, around = 0, allocated = 0, reused = 0, pollution = 0;
        Tick stall = 0;
        std::map<size_t, uint64_t> covered;  // post -> first uses of its lines
    };
    struct ActiveLoad {
        size_t load = 0;
        uint64_t first_line = 0, last_line = 0;
    };
    // The load in progress on some core whose region holds `line`; npos when none.
    size_t load_of(uint64_t line) const;
    // The latest post whose region holds `line` and was posted by `at`; npos when none.
    size_t owner_of(uint64_t line, Tick at) const;
    void detach();

    SimPlatform& platform_;
    AdvisorThresholds thresholds_;
    const Tick start_;
    uint64_t line_bytes_;
    CallLog calls_;
    std::vector<Post> posts_;
    std::map<uint64_t, std::vector<size_t>> by_first_line_;  // a region's first line -> its posts
    // (core, session) -> its posts in order, for the waits.
    std::map<std::pair<uint32_t, const void*>, std::vector<size_t>> session_posts_;
    std::unordered_map<uint64_t, Line> untouched_;  // prefetched lines no core has accessed yet
    std::unordered_map<uint64_t, size_t> victims_;  // lines a prefetch fill evicted -> that post
    std::unordered_map<uint64_t, size_t> allocated_;  // lines a load's miss brought in, not read since -> that load
    std::unordered_map<uint64_t, size_t> load_victims_;  // lines a load's miss evicted -> that load
    // (the load whose miss evicted a line, the access that then missed it: a
    // load, or npos) -> how often; a site missing its own lines is no pollution.
    std::map<std::pair<size_t, size_t>, uint64_t> load_pollution_;
    std::vector<Load> loads_;
    std::map<uint32_t, ActiveLoad> active_loads_;  // core id -> its load in progress
    uint64_t demand_misses_ = 0;
    bool finished_ = false;
};

}  // namespace pfsim::insight

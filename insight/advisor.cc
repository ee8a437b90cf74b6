#include "insight/advisor.h"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "base/json_integer.h"
#include "model/core/core.h"
#include "runtime/platform/sim/sim_platform.h"

namespace pfsim::insight {

namespace {

constexpr size_t kNoPost = ~size_t{0};

// Advice, highest estimated gain first (ties keep their order).
void rank_by_estimate(std::vector<Advice>& advice) {
    std::stable_sort(advice.begin(), advice.end(),
                     [](const Advice& a, const Advice& b) { return a.estimated_gain_ns > b.estimated_gain_ns; });
}

double median(std::vector<double> v) {
    if (v.empty()) return 0;
    std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
    return v[v.size() / 2];
}

// The 10th, 25th, 50th, 75th and 90th percentiles.
std::vector<double> quantiles(std::vector<double> v) {
    if (v.empty()) return {};
    std::sort(v.begin(), v.end());
    std::vector<double> q;
    for (double f : {0.10, 0.25, 0.50, 0.75, 0.90}) q.push_back(v[static_cast<size_t>(f * static_cast<double>(v.size() - 1) + 0.5)]);
    return q;
}

std::string us(double ns) {
    char b[32];
    std::snprintf(b, sizeof b, "%.2f us", ns / 1e3);
    return b;
}

std::string pct(double f) {
    char b[32];
    std::snprintf(b, sizeof b, "%.0f %%", 100 * f);
    return b;
}

}  // namespace

Advisor::Advisor(SimPlatform& platform, AdvisorThresholds thresholds)
    : platform_(platform), thresholds_(thresholds), start_(platform.now_ps()),
      line_bytes_(platform.soc().l2.line_bytes()) {
    platform.kernel_side().add_observer(this);
    platform.soc().l2.set_observer(this);
    for (auto* cores : {&platform.vector_cores(), &platform.cube_cores()}) {
        for (const auto& core : *cores) core->add_observer(this);
    }
}

Advisor::~Advisor() { detach(); }

void Advisor::detach() {
    if (finished_) return;
    finished_ = true;
    platform_.kernel_side().remove_observer(this);
    platform_.soc().l2.set_observer(nullptr);
    for (auto* cores : {&platform_.vector_cores(), &platform_.cube_cores()}) {
        for (const auto& core : *cores) core->remove_observer(this);
    }
}

size_t Advisor::owner_of(uint64_t line, Tick at) const {
    auto it = by_first_line_.upper_bound(line);
    for (int steps = 0; steps < 16 && it != by_first_line_.begin(); ++steps) {
        --it;
        for (auto p = it->second.rbegin(); p != it->second.rend(); ++p) {
            if (posts_[*p].last_line >= line && posts_[*p].posted <= at) return *p;
        }
    }
    return kNoPost;
}

// Registered before the doorbells, so that the lines the engine fills while
// they hold the core find their post.
void Advisor::publishing(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                         uint64_t since_ps) {
    Core& core = calling_core();
    Post p;
    p.call = calls_.record(core);
    p.first_line = gm / line_bytes_;
    p.last_line = (gm + bytes - 1) / line_bytes_;
    p.bytes = bytes;
    p.posted = since_ps;
    p.id = post_id;
    posts_.push_back(std::move(p));
    by_first_line_[posts_.back().first_line].push_back(posts_.size() - 1);
    session_posts_[{core.core_id(), &ctx.session}].push_back(posts_.size() - 1);
}

void Advisor::posted(const rt::PrefetchAsyncContext& ctx, uint64_t, uint64_t, uint64_t, uint64_t since_ps) {
    Core& core = calling_core();
    Post& p = posts_[session_posts_.at({core.core_id(), &ctx.session}).back()];
    p.post_ps = core.now_ps() - std::min<Tick>(core.now_ps(), since_ps);
}

void Advisor::waited(const rt::AsyncEvent& evt, const rt::AsyncSession&, bool, bool, uint64_t since_ps) {
    if (evt.handle == 0 || !evt.posted_on) return;
    Core& core = calling_core();
    auto it = session_posts_.find({core.core_id(), evt.posted_on});
    if (it == session_posts_.end()) return;
    const uint64_t post_id = evt.handle & ((uint64_t{1} << rt::kHandleQueueShift) - 1);
    size_t waited = kNoPost;
    for (size_t p : it->second) {
        if (posts_[p].id > post_id) continue;
        posts_[p].first_wait = std::min<Tick>(posts_[p].first_wait, since_ps);  // a wait covers earlier posts
        if (posts_[p].id == post_id) waited = p;
    }
    if (waited != kNoPost) posts_[waited].wait_ps += core.now_ps() - std::min<Tick>(core.now_ps(), since_ps);
}

void Advisor::prefetched(uint64_t line, bool filled, Tick issue, Tick ready) {
    const size_t owner = owner_of(line, issue);
    if (owner == kNoPost) return;
    Post& p = posts_[owner];
    if (!filled) {
        ++p.resident;
        return;
    }
    ++p.filled;
    p.fill_ns.push_back(static_cast<double>(ready - std::min(ready, p.posted)) / 1e3);
    untouched_[line] = {owner, ready};
    victims_.erase(line);
}

size_t Advisor::load_of(uint64_t line) const {
    for (const auto& [core, a] : active_loads_) {
        if (a.first_line <= line && line <= a.last_line) return a.load;
    }
    return kNoPost;
}

void Advisor::transfer_started(Core& core, bool write, uint64_t gm, uint64_t bytes) {
    if (write || bytes == 0) return;
    Load l;
    l.call = calls_.record(core);
    l.bytes = bytes;
    loads_.push_back(std::move(l));
    active_loads_[core.core_id()] = {loads_.size() - 1, gm / line_bytes_, (gm + bytes - 1) / line_bytes_};
}

void Advisor::transfer_ended(Core& core, bool write, uint64_t, uint64_t, Tick stall_ps) {
    if (write) return;
    auto it = active_loads_.find(core.core_id());
    if (it == active_loads_.end()) return;
    loads_[it->second.load].stall += stall_ps;
    active_loads_.erase(it);
}

void Advisor::demand(uint64_t line, bool, bool hit, bool first_touch, Tick start, Tick, bool around) {
    const size_t load = load_of(line);
    if (load != kNoPost) {
        ++loads_[load].lines;
        loads_[load].misses += hit ? 0 : 1;
        loads_[load].around += around ? 1 : 0;
    }
    if (!hit) {
        ++demand_misses_;
        auto v = victims_.find(line);
        if (v != victims_.end()) {
            ++posts_[v->second].pollution;
            victims_.erase(v);
        }
        auto lv = load_victims_.find(line);
        if (lv != load_victims_.end()) {
            ++load_pollution_[{lv->second, load}];
            load_victims_.erase(lv);
        }
        if (load != kNoPost && !around) {
            ++loads_[load].allocated;
            allocated_[line] = load;
        }
        return;
    }
    if (auto a = allocated_.find(line); a != allocated_.end()) {  // read again while still in L2
        ++loads_[a->second].reused;
        allocated_.erase(a);
    }
    if (!first_touch) return;
    auto it = untouched_.find(line);
    if (it == untouched_.end()) return;  // filled before the advisor watched
    Post& p = posts_[it->second.post];
    const Tick ready = it->second.ready;
    ++p.useful;
    if (load != kNoPost) ++loads_[load].covered[it->second.post];
    const Tick needed = std::min(start, p.first_wait);
    if (ready > needed) {
        ++p.late;
        p.lead_ns.push_back(-static_cast<double>(ready - needed) / 1e3);
    } else {
        p.lead_ns.push_back(static_cast<double>(needed - ready) / 1e3);
    }
    untouched_.erase(it);
}

void Advisor::evicted(uint64_t victim, bool untouched, bool by_prefetch, uint64_t line) {
    allocated_.erase(victim);  // evicted before anyone read it again
    if (!by_prefetch) {
        const size_t load = load_of(line);
        if (load != kNoPost) load_victims_[victim] = load;
    }
    if (untouched) {
        auto it = untouched_.find(victim);
        if (it != untouched_.end()) {
            ++posts_[it->second.post].evicted_unused;
            untouched_.erase(it);
        }
    }
    if (!by_prefetch) return;
    const size_t owner = owner_of(line, ~Tick{0});
    if (owner != kNoPost) victims_[victim] = owner;
}

std::vector<double> task_slack_ns(const std::vector<TaskSpan>& tasks) {
    double end = 0;
    for (const TaskSpan& t : tasks) end = std::max(end, t.end_ns);
    std::vector<double> slack(tasks.size(), 0);
    std::vector<bool> has_successor(tasks.size(), false);
    for (const TaskSpan& t : tasks) {
        for (uint32_t d : t.deps) {
            if (d < tasks.size()) has_successor[d] = true;
        }
    }
    for (size_t i = 0; i < tasks.size(); ++i) slack[i] = has_successor[i] ? 1e300 : end - tasks[i].end_ns;
    for (size_t i = tasks.size(); i-- > 0;) {  // dependencies point to earlier tasks
        for (uint32_t d : tasks[i].deps) {
            if (d < tasks.size()) slack[d] = std::min(slack[d], tasks[i].start_ns - tasks[d].end_ns + slack[i]);
        }
    }
    return slack;
}

void weigh_by_critical_path(AdvisorReport& report, const std::vector<TaskSpan>& tasks) {
    if (tasks.empty()) return;
    const std::vector<double> slack = task_slack_ns(tasks);
    double begin = tasks.front().start_ns, end = 0;
    for (const TaskSpan& t : tasks) begin = std::min(begin, t.start_ns), end = std::max(end, t.end_ns);
    const double tolerance = 0.01 * (end - begin);
    for (Advice& a : report.advice) {
        const PrefetchSiteStats* site = nullptr;
        for (const PrefetchSiteStats& st : report.sites) site = st.where == a.where ? &st : site;
        if (!site || site->tasks.empty() || a.estimated_gain_ns <= 0) continue;
        double least = 1e300;
        for (const std::string& name : site->tasks) {
            for (size_t i = 0; i < tasks.size(); ++i) least = tasks[i].name == name ? std::min(least, slack[i]) : least;
        }
        if (least <= tolerance || least >= 1e300) continue;
        a.estimated_gain_ns = 0;
        a.message += "; off the critical path (its task could have ended " + us(least) + " later), so no gain estimated";
    }
    rank_by_estimate(report.advice);
}

namespace {

// The entry of `list` for the call site s (one per "file:line"; `index` finds
// it), made when new, with s's core and task (without its block) added once.
template <typename SiteStats>
SiteStats& stats_of_site(std::vector<SiteStats>& list, std::map<std::string, size_t>& index, const Site& s) {
    auto it = index.find(s.where.empty() ? "?" : s.where);
    if (it == index.end()) {
        it = index.emplace(s.where.empty() ? "?" : s.where, list.size()).first;
        list.push_back({});
        list.back().where = s.where;
    }
    SiteStats& st = list[it->second];
    if (std::find(st.cores.begin(), st.cores.end(), s.core) == st.cores.end()) st.cores.push_back(s.core);
    const std::string task = s.task.substr(0, s.task.find(" block"));
    if (s.task.rfind("task ", 0) == 0 && std::find(st.tasks.begin(), st.tasks.end(), task) == st.tasks.end()) {
        st.tasks.push_back(task);
    }
    return st;
}

}  // namespace

AdvisorReport Advisor::finish() {
    AdvisorReport r;
    r.thresholds = thresholds_;
    if (finished_) return r;
    detach();
    r.demand_misses = demand_misses_;
    const std::vector<Site> sites = calls_.resolve(start_);
    std::map<std::string, size_t> by_where;
    for (const Post& p : posts_) {
        const Site& s = sites[p.call];
        PrefetchSiteStats& st = stats_of_site(r.sites, by_where, s);
        if (st.posts == 0) st.first_post_ns = s.time_ns;
        ++st.posts;
        st.bytes += p.bytes;
        st.lines_requested += p.last_line - p.first_line + 1;
        st.lines_filled += p.filled;
        st.lines_resident += p.resident;
        st.useful += p.useful;
        st.late += p.late;
        st.evicted_unused += p.evicted_unused;
        st.pollution_misses += p.pollution;
        st.post_ns += static_cast<double>(p.post_ps) / 1e3;
        st.wait_ns += static_cast<double>(p.wait_ps) / 1e3;
        st.fill_ns.insert(st.fill_ns.end(), p.fill_ns.begin(), p.fill_ns.end());
        st.lead_ns.insert(st.lead_ns.end(), p.lead_ns.begin(), p.lead_ns.end());
    }
    for (const auto& [loads, misses] : load_pollution_) {
        const auto& [evicting, missing] = loads;
        if (missing == kNoPost || sites[loads_[missing].call].where != sites[loads_[evicting].call].where) {
            loads_[evicting].pollution += misses;
        }
    }
    std::map<std::string, size_t> loads_by_where;
    for (const Load& l : loads_) {
        LoadSiteStats& st = stats_of_site(r.load_sites, loads_by_where, sites[l.call]);
        ++st.loads;
        st.bytes += l.bytes;
        st.lines += l.lines;
        st.misses += l.misses;
        st.around += l.around;
        st.allocated += l.allocated;
        st.reused += l.reused;
        st.pollution_misses += l.pollution;
        st.stall_ns += static_cast<double>(l.stall) / 1e3;
        for (const auto& [post, lines] : l.covered) {
            const std::string& by = sites[posts_[post].call].where;
            st.covered_by[by.empty() ? "?" : by] += lines;
        }
    }
    std::stable_sort(r.load_sites.begin(), r.load_sites.end(),
                     [](const LoadSiteStats& a, const LoadSiteStats& b) { return a.stall_ns > b.stall_ns; });
    for (const LoadSiteStats& st : r.load_sites) {
        const double cores = static_cast<double>(std::max<size_t>(1, st.cores.size()));
        // A stream read once whose allocations cost other loads their lines: a
        // prefetch would pollute as much; reading around the L2 keeps them.
        if (st.allocated > 0 && st.reuse() <= thresholds_.load_reuse && st.pollution_misses > 0) {
            r.advice.push_back({st.where, "bypass",
                                "load around the L2 (TLOAD<TLoadL2Hint::NotAllocKeep>): of the " +
                                    std::to_string(st.allocated) + " lines its loads brought into L2, " +
                                    std::to_string(st.reused) + " were read again, and " +
                                    std::to_string(st.pollution_misses) +
                                    " later demand misses were on lines those allocations evicted",
                                0});
            continue;
        }
        if (st.miss_rate() < thresholds_.load_miss_rate || st.stall_ns / cores < thresholds_.load_stall_ns) continue;
        const double late = st.stall_ns / static_cast<double>(std::max<uint64_t>(1, st.loads));
        r.advice.push_back({st.where, "prefetch",
                            "loads here miss " + pct(st.miss_rate()) + " of their " + std::to_string(st.lines) +
                                " lines, each load's data " + us(late) + " late: prefetch that region >= " + us(late) +
                                " ahead of it",
                            st.stall_ns / cores});
    }
    for (const PrefetchSiteStats& st : r.sites) {
        // Cores post and wait in parallel: a site's time per core is what one core's run may save.
        const double cores = static_cast<double>(std::max<size_t>(1, st.cores.size()));
        if (st.lines_filled == 0 && st.lines_resident > 0) {
            r.advice.push_back({st.where, "redundant",
                                "drop it: every line it asked for was already in L2 (" + std::to_string(st.lines_resident) +
                                    " lines)",
                                st.post_ns / cores});
            continue;
        }
        if (st.lines_filled > 0 && st.accuracy() < thresholds_.accuracy_low) {
            r.advice.push_back({st.where, "drop",
                                "drop it: accuracy " + pct(st.accuracy()) + " (" + std::to_string(st.useful) + " of " +
                                    std::to_string(st.lines_filled) + " lines it filled were used; " +
                                    std::to_string(st.evicted_unused) + " evicted unused)",
                                (st.post_ns + st.wait_ns) / cores});
        }
        if (st.useful > 0 && st.lateness() > thresholds_.lateness) {
            std::vector<double> late;
            for (double l : st.lead_ns) {
                if (l < 0) late.push_back(-l);
            }
            r.advice.push_back({st.where, "earlier",
                                "move this prefetch >= " + us(median(late)) + " earlier: " + pct(st.lateness()) +
                                    " of its useful lines were late (" + us(st.wait_ns / cores) +
                                    " waiting for it per core)",
                                st.wait_ns / cores});
        }
        if (st.post_ns / cores >= thresholds_.post_ns) {
            r.advice.push_back({st.where, "costly",
                                "its " + std::to_string(st.posts) + " posts held its cores " + us(st.post_ns / cores) +
                                    " each (" + us(st.post_ns / static_cast<double>(st.posts)) +
                                    " a post: requests written and flushed, two doorbells, which the engine publishes "
                                    "one at a time engine-wide): post fewer, larger prefetches, or from fewer cores",
                                st.post_ns / cores});
        }
        if (r.pollution(st) > thresholds_.pollution) {
            r.advice.push_back({st.where, "pollutes",
                                "it evicts lines the loads need: " + std::to_string(st.pollution_misses) + " demand misses (" +
                                    pct(r.pollution(st)) + " of all) were on lines its fills evicted",
                                0});
        }
    }
    rank_by_estimate(r.advice);
    return r;
}

std::string AdvisorReport::text() const {
    std::ostringstream os;
    char row[512];
    if (ranks > 1) {
        os << ranks << " dies: the advice on prefetches that delayed copies between dies (per-site L2 counts are "
           << "not made on several dies)\n";
        return advice_text(os);
    }
    std::snprintf(row, sizeof row, "%-28s %6s %9s %8s %8s %8s %8s %8s %8s %8s %9s %10s %10s\n", "prefetch site", "posts",
                  "MiB", "filled", "resident", "useful", "late", "evicted", "accuracy", "lateness", "pollution",
                  "wait us", "fill us");
    os << row;
    for (const PrefetchSiteStats& s : sites) {
        std::snprintf(row, sizeof row, "%-28s %6llu %9.2f %8llu %8llu %8llu %8llu %8llu %8s %8s %9.4f %10.2f %10.2f\n",
                      (s.where.empty() ? "?" : s.where).c_str(), static_cast<unsigned long long>(s.posts),
                      static_cast<double>(s.bytes) / (1 << 20), static_cast<unsigned long long>(s.lines_filled),
                      static_cast<unsigned long long>(s.lines_resident), static_cast<unsigned long long>(s.useful),
                      static_cast<unsigned long long>(s.late), static_cast<unsigned long long>(s.evicted_unused),
                      s.lines_filled ? pct(s.accuracy()).c_str() : "-", s.useful ? pct(s.lateness()).c_str() : "-",
                      pollution(s), s.wait_ns / 1e3, median(s.fill_ns) / 1e3);
        os << row;
    }
    if (sites.empty()) os << "(no prefetch was posted)\n";
    os << "demand misses: " << demand_misses << "\n";
    if (!load_sites.empty()) {
        std::snprintf(row, sizeof row, "%-28s %7s %9s %9s %9s %7s %10s  %s\n", "load site", "loads", "MiB", "lines",
                      "misses", "miss %", "stall us", "covered by (prefetch site: first uses of its lines)");
        os << row;
    }
    for (const LoadSiteStats& l : load_sites) {
        std::string covered;
        for (const auto& [by, lines] : l.covered_by) {
            covered += (covered.empty() ? "" : ", ") + by + ": " + std::to_string(lines);
        }
        std::snprintf(row, sizeof row, "%-28s %7llu %9.2f %9llu %9llu %7s %10.2f  %s\n",
                      (l.where.empty() ? "?" : l.where).c_str(), static_cast<unsigned long long>(l.loads),
                      static_cast<double>(l.bytes) / (1 << 20), static_cast<unsigned long long>(l.lines),
                      static_cast<unsigned long long>(l.misses), l.lines ? pct(l.miss_rate()).c_str() : "-",
                      l.stall_ns / 1e3, covered.empty() ? "-" : covered.c_str());
        os << row;
    }
    if (what_if.measured) {
        const WhatIf& w = what_if;
        std::snprintf(row, sizeof row,
                      "what-if (measured): prefetch off %.3f us; this run %.3f us (gain %.1f %%); ideal, every core "
                      "access an L2 hit, %.3f us: no prefetch can gain more than %.1f %%\n",
                      w.prefetch_off_ns / 1e3, w.this_run_ns / 1e3, w.gain_pct(), w.ideal_ns / 1e3, w.ideal_gain_pct());
        os << row;
    }
    return advice_text(os);
}

std::string AdvisorReport::advice_text(std::ostringstream& os) const {
    if (ranks > 1 && what_if.measured) {
        os << "what-if (measured): prefetch off " << us(what_if.prefetch_off_ns) << "; this run "
           << us(what_if.this_run_ns) << "\n";
    }
    if (advice.empty()) {
        os << (ranks > 1 ? "advice: none (no copy between dies waited behind a prefetch in its ring)\n"
                         : "advice: none (every site within FDP's thresholds)\n");
    }
    for (size_t i = 0; i < advice.size(); ++i) {
        const Advice& a = advice[i];
        os << (i == 0 ? "advice:\n" : "") << "  " << i + 1 << ". " << (a.where.empty() ? "?" : a.where) << ": " << a.message;
        if (a.estimated_gain_ns > 0) os << " (estimated gain " << us(a.estimated_gain_ns) << ")";
        if (a.comm_measured && a.measured && what_if.measured) {
            const double removed = a.comm_wait_ns - a.without_comm_wait_ns;
            const double g = a.measured_gain_ns(what_if.this_run_ns);
            os << "; measured: without it the copies wait " << us(a.without_comm_wait_ns) << " behind prefetches, "
               << us(removed < 0 ? -removed : removed) << (removed >= 0 ? " less" : " more") << ", and the run takes "
               << us(a.without_ns) << ", " << us(g < 0 ? -g : g) << (g >= 0 ? " less" : " more");
        } else if (a.measured && what_if.measured) {
            const double g = a.measured_gain_ns(what_if.this_run_ns);
            os << "; measured: without it the run takes " << us(a.without_ns) << ", " << us(g < 0 ? -g : g)
               << (g >= 0 ? " less" : " more");
        }
        if (a.resident_measured && what_if.measured) {
            const double g = what_if.this_run_ns - a.resident_ns;
            os << (a.measured ? "; " : "; measured: ") << "with its lines resident at no cost " << us(a.resident_ns) << ", "
               << us(g < 0 ? -g : g) << (g >= 0 ? " less" : " more");
        }
        if (a.around_measured && what_if.measured) {
            const double g = what_if.this_run_ns - a.around_ns;
            os << "; measured: with its loads around the L2 the run takes " << us(a.around_ns) << ", "
               << us(g < 0 ? -g : g) << (g >= 0 ? " less" : " more");
        }
        os << "\n";
    }
    return os.str();
}

nlohmann::json AdvisorReport::to_json() const {
    nlohmann::json list = nlohmann::json::array();
    for (const PrefetchSiteStats& s : sites) {
        list.push_back({{"where", s.where}, {"cores", s.cores}, {"tasks", s.tasks}, {"first_post_ns", s.first_post_ns}, {"posts", s.posts},
                        {"bytes", s.bytes},
                        {"lines_requested", s.lines_requested}, {"lines_filled", s.lines_filled},
                        {"lines_resident", s.lines_resident}, {"useful", s.useful}, {"late", s.late},
                        {"evicted_unused", s.evicted_unused}, {"pollution_misses", s.pollution_misses},
                        {"accuracy", s.accuracy()}, {"lateness", s.lateness()}, {"pollution", pollution(s)},
                        {"post_ns", s.post_ns}, {"wait_ns", s.wait_ns}, {"fill_ns_median", median(s.fill_ns)},
                        {"lead_ns_median", median(s.lead_ns)}, {"fill_ns_quantiles", quantiles(s.fill_ns)},
                        {"lead_ns_quantiles", quantiles(s.lead_ns)}});
    }
    nlohmann::json loads = nlohmann::json::array();
    for (const LoadSiteStats& l : load_sites) {
        loads.push_back({{"where", l.where}, {"cores", l.cores}, {"tasks", l.tasks}, {"loads", l.loads}, {"bytes", l.bytes},
                         {"lines", l.lines}, {"misses", l.misses}, {"miss_rate", l.miss_rate()}, {"stall_ns", l.stall_ns},
                         {"around", l.around}, {"allocated", l.allocated}, {"reused", l.reused},
                         {"pollution_misses", l.pollution_misses}, {"covered_by", l.covered_by}});
    }
    nlohmann::json adv = nlohmann::json::array();
    for (const Advice& a : advice) {
        adv.push_back({{"where", a.where}, {"verdict", a.verdict}, {"message", a.message},
                       {"estimated_gain_ns", a.estimated_gain_ns},
                       {"without_ns", a.measured ? nlohmann::json(a.without_ns) : nlohmann::json(nullptr)},
                       {"resident_ns", a.resident_measured ? nlohmann::json(a.resident_ns) : nlohmann::json(nullptr)},
                       {"around_ns", a.around_measured ? nlohmann::json(a.around_ns) : nlohmann::json(nullptr)}});
        if (a.verdict == "delays_comm") {
            adv.back()["comm_wait_ns"] = a.comm_wait_ns;
            adv.back()["without_comm_wait_ns"] = a.comm_measured ? nlohmann::json(a.without_comm_wait_ns) : nlohmann::json(nullptr);
        }
    }
    nlohmann::json what = nullptr;
    if (what_if.measured) {
        what = {{"prefetch_off_ns", what_if.prefetch_off_ns}, {"this_run_ns", what_if.this_run_ns},
                {"ideal_ns", what_if.ideal_ns}, {"gain_pct", what_if.gain_pct()}, {"ideal_gain_pct", what_if.ideal_gain_pct()}};
    }
    nlohmann::json report = {{"sites", list},
            {"load_sites", loads},
            {"what_if", what},
            {"demand_misses", demand_misses},
            {"thresholds",
             {{"accuracy_high", thresholds.accuracy_high}, {"accuracy_low", thresholds.accuracy_low},
              {"lateness", thresholds.lateness}, {"pollution", thresholds.pollution},
              {"load_miss_rate", thresholds.load_miss_rate}, {"load_stall_ns", thresholds.load_stall_ns},
              {"load_reuse", thresholds.load_reuse},
              {"post_ns", thresholds.post_ns}}},
            {"advice", adv}};
    if (ranks > 1) report["ranks"] = ranks;
    return report;
}

AdvisorReport AdvisorReport::from_json(const nlohmann::json& j) {
    AdvisorReport r;
    r.demand_misses = json_integer<uint64_t>(j.at("demand_misses"));
    r.ranks = json_integer_or<uint32_t>(j, "ranks", 1);
    if (const nlohmann::json& w = j.at("what_if"); !w.is_null()) {
        r.what_if = {true, w.at("prefetch_off_ns").get<double>(), w.at("this_run_ns").get<double>(),
                     w.at("ideal_ns").get<double>()};
    }
    const nlohmann::json& t = j.at("thresholds");
    r.thresholds = {t.at("accuracy_high").get<double>(), t.at("accuracy_low").get<double>(), t.at("lateness").get<double>(),
                    t.at("pollution").get<double>(), t.value("load_miss_rate", AdvisorThresholds{}.load_miss_rate),
                    t.value("load_stall_ns", AdvisorThresholds{}.load_stall_ns),
                    t.value("post_ns", AdvisorThresholds{}.post_ns)};
    r.thresholds.load_reuse = t.value("load_reuse", AdvisorThresholds{}.load_reuse);
    for (const nlohmann::json& l : j.value("load_sites", nlohmann::json::array())) {
        LoadSiteStats st;
        st.where = l.at("where").get<std::string>();
        st.cores = l.at("cores").get<std::vector<std::string>>();
        st.tasks = l.at("tasks").get<std::vector<std::string>>();
        st.loads = json_integer<uint64_t>(l.at("loads"));
        st.bytes = json_integer<uint64_t>(l.at("bytes"));
        st.lines = json_integer<uint64_t>(l.at("lines"));
        st.misses = json_integer<uint64_t>(l.at("misses"));
        st.stall_ns = l.at("stall_ns").get<double>();
        st.around = l.value("around", uint64_t{0});
        st.allocated = l.value("allocated", uint64_t{0});
        st.reused = l.value("reused", uint64_t{0});
        st.pollution_misses = l.value("pollution_misses", uint64_t{0});
        st.covered_by = l.at("covered_by").get<std::map<std::string, uint64_t>>();
        r.load_sites.push_back(std::move(st));
    }
    for (const nlohmann::json& s : j.at("sites")) {
        PrefetchSiteStats st;
        st.where = s.at("where").get<std::string>();
        st.cores = s.at("cores").get<std::vector<std::string>>();
        st.tasks = s.value("tasks", std::vector<std::string>{});
        st.first_post_ns = s.at("first_post_ns").get<double>();
        st.posts = json_integer<uint64_t>(s.at("posts"));
        st.bytes = json_integer<uint64_t>(s.at("bytes"));
        st.lines_requested = json_integer<uint64_t>(s.at("lines_requested"));
        st.lines_filled = json_integer<uint64_t>(s.at("lines_filled"));
        st.lines_resident = json_integer<uint64_t>(s.at("lines_resident"));
        st.useful = json_integer<uint64_t>(s.at("useful"));
        st.late = json_integer<uint64_t>(s.at("late"));
        st.evicted_unused = json_integer<uint64_t>(s.at("evicted_unused"));
        st.pollution_misses = json_integer<uint64_t>(s.at("pollution_misses"));
        st.post_ns = s.at("post_ns").get<double>();
        st.wait_ns = s.at("wait_ns").get<double>();
        st.fill_ns = s.at("fill_ns_quantiles").get<std::vector<double>>();  // the distribution's outline
        st.lead_ns = s.at("lead_ns_quantiles").get<std::vector<double>>();
        r.sites.push_back(std::move(st));
    }
    for (const nlohmann::json& a : j.at("advice")) {
        Advice x{a.at("where").get<std::string>(), a.at("verdict").get<std::string>(), a.at("message").get<std::string>(),
                 a.at("estimated_gain_ns").get<double>()};
        if (!a.at("without_ns").is_null()) {
            x.measured = true;
            x.without_ns = a["without_ns"].get<double>();
        }
        if (a.contains("resident_ns") && !a["resident_ns"].is_null()) {
            x.resident_measured = true;
            x.resident_ns = a["resident_ns"].get<double>();
        }
        if (a.contains("around_ns") && !a["around_ns"].is_null()) {
            x.around_measured = true;
            x.around_ns = a["around_ns"].get<double>();
        }
        x.comm_wait_ns = a.value("comm_wait_ns", 0.0);
        if (a.contains("without_comm_wait_ns") && !a["without_comm_wait_ns"].is_null()) {
            x.comm_measured = true;
            x.without_comm_wait_ns = a["without_comm_wait_ns"].get<double>();
        }
        r.advice.push_back(std::move(x));
    }
    return r;
}

}  // namespace pfsim::insight

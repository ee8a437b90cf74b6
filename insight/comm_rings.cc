#include "insight/comm_rings.h"

#include <algorithm>

#include "model/core/core.h"

namespace pfsim::insight {

CommRingLog::CommRingLog(SimDies& dies) {
    for (uint32_t r = 0; r < dies.count(); ++r) dies_.push_back(&dies.die(r).kernel_side());
    for (rt::KernelSide* die : dies_) die->add_observer(this);
}

CommRingLog::~CommRingLog() { detach(); }

void CommRingLog::detach() {
    if (finished_) return;
    finished_ = true;
    for (rt::KernelSide* die : dies_) die->remove_observer(this);
}

void CommRingLog::record(const rt::AsyncSession& s, const char* instruction, uint64_t bytes) {
    Core& core = calling_core();
    Post p;
    p.instruction = instruction;
    p.call = calls_.record(core);
    const std::string name = core.name();
    p.die = name.substr(0, name.find('.'));
    p.ring = s.sq_base;
    p.bytes = bytes;
    posts_.push_back(std::move(p));
}

void CommRingLog::posted(const rt::PrefetchAsyncContext& ctx, uint64_t, uint64_t, uint64_t bytes, uint64_t) {
    record(ctx.session, "", bytes);
}

void CommRingLog::copy_posted(const rt::AsyncSession& s, const char* instruction, uint64_t, uint64_t, uint64_t bytes) {
    record(s, instruction, bytes);
}

std::vector<CommRingLog::PrefetchSite> CommRingLog::finish(Tick start) {
    detach();
    const std::vector<Site> sites = calls_.resolve(start);
    auto task_of = [&](const Post& p) { return sites[p.call].task + " on " + sites[p.call].core; };
    std::vector<PrefetchSite> out;
    for (size_t i = 0; i < posts_.size(); ++i) {
        const Post& p = posts_[i];
        if (!p.instruction.empty()) continue;
        const std::string& where = sites[p.call].where;
        auto site = std::find_if(out.begin(), out.end(), [&](const PrefetchSite& s) { return s.where == where; });
        if (site == out.end()) {
            out.push_back({where, {}, 0, 0, {}});
            site = out.end() - 1;
        }
        ++site->posts;
        site->bytes += p.bytes;
        const std::string task = task_of(p);
        if (std::find(site->tasks.begin(), site->tasks.end(), task) == site->tasks.end()) site->tasks.push_back(task);
        for (size_t j = 0; j < posts_.size(); ++j) {
            const Post& c = posts_[j];
            if (c.instruction.empty() || c.die != p.die || c.ring != p.ring) continue;
            if (calls_.time(c.call) < calls_.time(p.call) || (calls_.time(c.call) == calls_.time(p.call) && j < i)) continue;
            const bool known = std::any_of(site->copies_behind.begin(), site->copies_behind.end(),
                                           [&](const CopyPost& k) { return k.site.time_ns == sites[c.call].time_ns &&
                                                                           k.site.core == sites[c.call].core; });
            if (!known) site->copies_behind.push_back({c.instruction, sites[c.call]});
        }
    }
    for (PrefetchSite& s : out) {
        std::sort(s.copies_behind.begin(), s.copies_behind.end(),
                  [](const CopyPost& a, const CopyPost& b) { return a.site.time_ns < b.site.time_ns; });
    }
    return out;
}

}  // namespace pfsim::insight

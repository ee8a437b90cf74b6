#include "insight/call_log.h"

#include <algorithm>

#include <execinfo.h>

#include "model/core/core.h"

namespace pfsim::insight {

Core& calling_core() { return static_cast<Core&>(current_core()); }

size_t CallLog::record(Core& core) {
    Call c;
    c.stack.resize(16);
    c.stack.resize(static_cast<size_t>(backtrace(c.stack.data(), static_cast<int>(c.stack.size()))));
    c.core = core.name();
    c.task = core.task_label();
    c.time = core.now_ps();
    calls_.push_back(std::move(c));
    return calls_.size() - 1;
}

std::vector<Site> CallLog::resolve(Tick start) const {
    std::vector<std::vector<void*>> stacks;
    for (const Call& c : calls_) stacks.push_back(c.stack);
    const std::vector<std::string> where =
        kernel_source_lines ? kernel_source_lines(stacks) : std::vector<std::string>(calls_.size());
    std::vector<Site> sites;
    for (size_t i = 0; i < calls_.size(); ++i) {
        sites.push_back({where[i], calls_[i].core, calls_[i].task,
                         static_cast<double>(calls_[i].time - std::min(calls_[i].time, start)) / 1e3});
    }
    return sites;
}

}  // namespace pfsim::insight

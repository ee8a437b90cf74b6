// Which cores posted on which SDMA channel group of one die during a launch:
// the first core, and whether another did too (runtime/prefetch.cc's
// shared-group warning and ring-tail check). Each die owns its table
// (Platform::channel_groups, and Device::channel_groups for the die of the
// calling core), and its worker clears it before each launch or graph: cores
// of different dies posting on equal group numbers of their own engines
// never share a group.
#pragma once

#include <cstdint>
#include <map>
#include <utility>

namespace pfsim::rt {

class ChannelGroups {
public:
    struct Use {
        uint32_t first_core = 0;
        bool shared = false;
    };
    // The group's use, with `core` as its first poster when no core posted on it yet.
    Use& use(uint64_t workspace, uint32_t group, uint32_t core) {
        return uses_.emplace(std::make_pair(workspace, group), Use{core, false}).first->second;
    }
    // The group's use so far; null when no core posted on it.
    const Use* find(uint64_t workspace, uint32_t group) const {
        const auto it = uses_.find(std::make_pair(workspace, group));
        return it == uses_.end() ? nullptr : &it->second;
    }
    void clear() { uses_.clear(); }

private:
    std::map<std::pair<uint64_t, uint32_t>, Use> uses_;  // by (workspace, group)
};

}  // namespace pfsim::rt

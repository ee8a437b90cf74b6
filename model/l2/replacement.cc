#include "model/l2/replacement.h"

#include <stdexcept>

namespace pfsim {

// Each policy: one file, one line here.
std::unique_ptr<ReplacementPolicy> make_lru(uint64_t sets, uint64_t ways);
std::unique_ptr<ReplacementPolicy> make_lru_prefetch_lru(uint64_t sets, uint64_t ways);
std::unique_ptr<ReplacementPolicy> make_srrip(uint64_t sets, uint64_t ways);

namespace {

struct Registration {
    const char* name;
    std::unique_ptr<ReplacementPolicy> (*make)(uint64_t sets, uint64_t ways);
};

constexpr Registration kPolicies[] = {
    {"lru", make_lru},
    {"lru_prefetch_lru", make_lru_prefetch_lru},
    {"srrip", make_srrip},
};

}  // namespace

std::vector<std::string> replacement_policies() {
    std::vector<std::string> names;
    for (const Registration& r : kPolicies) names.push_back(r.name);
    return names;
}

std::unique_ptr<ReplacementPolicy> make_replacement(const std::string& name, uint64_t sets, uint64_t ways) {
    for (const Registration& r : kPolicies) {
        if (name == r.name) return r.make(sets, ways);
    }
    throw std::invalid_argument("no replacement policy '" + name + "'");
}

}  // namespace pfsim

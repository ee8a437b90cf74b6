// How the L2 orders the ways of a set and picks the one to replace
// (l2.replacement). The tag store keeps which line each way holds and takes an
// invalid way first without asking; a policy keeps only its own state per way.
//
// Contract, for a cache of `sets` x `ways` (calls name a set and a way in it):
//  - touch(set, way, by): the line in `way` was accessed and is resident (a hit,
//    by a core's demand access or by a prefetch reaching a line already there);
//  - insert(set, way, by): `way` now holds a new line, filled by a demand miss
//    or by a prefetch; after insert the way is valid until it is the victim;
//  - victim(set): every way of `set` is valid; which one to replace. The
//    caller then inserts the new line into that way. A policy may update its
//    own state of the set here (SRRIP ages it), nothing else.
// A policy is deterministic: the same calls give the same victims.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace pfsim {

enum class Fill { Demand, Prefetch };

class ReplacementPolicy {
public:
    virtual ~ReplacementPolicy() = default;
    virtual void touch(uint64_t set, unsigned way, Fill by) = 0;
    virtual void insert(uint64_t set, unsigned way, Fill by) = 0;
    virtual unsigned victim(uint64_t set) = 0;
    // A hint: `set` is accessed soon; the host may start loading its state into
    // its cache. Changes nothing.
    virtual void warm_host_cache(uint64_t) const {}
};

// The policies pfsim has, by their l2.replacement name, in the order the
// configuration lists them.
std::vector<std::string> replacement_policies();
// Throws std::invalid_argument for a name replacement_policies() lacks.
std::unique_ptr<ReplacementPolicy> make_replacement(const std::string& name, uint64_t sets, uint64_t ways);

}  // namespace pfsim

#include "model/core/scalar_data_cache.h"

#include <stdexcept>
#include <string>

namespace pfsim {

namespace {

bool power_of_two(uint64_t n) { return n && !(n & (n - 1)); }

}  // namespace

ScalarDataCache::ScalarDataCache(uint64_t bytes, uint64_t line_bytes, uint64_t ways)
    : line_bytes_(line_bytes),
      assoc_(ways),
      sets_(ways && line_bytes ? bytes / (line_bytes * ways) : 0),
      line_shift_(line_bytes ? __builtin_ctzll(line_bytes) : 0),
      ways_(sets_ * assoc_) {
    if (!power_of_two(line_bytes) || !power_of_two(sets_) || sets_ * line_bytes * ways != bytes) {
        throw std::invalid_argument("scalar data cache: " + std::to_string(bytes) + " bytes in " +
                                    std::to_string(line_bytes) + "-byte lines, " + std::to_string(ways) +
                                    " ways: not a power-of-two number of sets of power-of-two lines");
    }
}

bool ScalarDataCache::write(uint64_t gm) {
    Way* way = find(line_number(gm));
    if (!way) return false;
    way->used = ++clock_;
    way->dirty = true;
    return true;
}

bool ScalarDataCache::install(uint64_t gm, uint64_t* written_back) {
    const uint64_t line = line_number(gm);
    Way* set = set_of(line);
    Way* victim = &set[0];
    for (uint64_t w = 0; w < assoc_; ++w) {
        if (set[w].tag == kInvalid) {
            victim = &set[w];
            break;
        }
        if (set[w].used < victim->used) victim = &set[w];
    }
    const bool dirty = victim->tag != kInvalid && victim->dirty;
    if (dirty) *written_back = victim->tag * line_bytes_;
    *victim = Way{line, ++clock_, false};
    return dirty;
}

bool ScalarDataCache::invalidate(uint64_t gm) {
    Way* way = find(line_number(gm));
    if (!way) return false;
    const bool dirty = way->dirty;
    *way = Way{};
    return dirty;
}

std::vector<uint64_t> ScalarDataCache::invalidate_all() {
    std::vector<uint64_t> dirty;
    for (Way& way : ways_) {
        if (way.tag != kInvalid && way.dirty) dirty.push_back(way.tag * line_bytes_);
        way = Way{};
    }
    return dirty;
}

uint64_t ScalarDataCache::lines_held() const {
    uint64_t n = 0;
    for (const Way& way : ways_) n += way.tag != kInvalid;
    return n;
}

}  // namespace pfsim

// The AI core's scalar data cache (DCache): the tags of the GM lines the
// scalar unit's loads and stores keep near the core, for timing only. It holds
// no bytes: a read always returns GM's current value (the caller reads GM), so
// it never serves a stale value the board could show without a dcci.
//
// Set-associative, LRU within a set, write-back on a store hit (the line turns
// dirty) and no allocation on a store miss. The Core asks it, per line of an
// access, whether the line is there; it says which dirty line an install or an
// invalidation pushes out, and the Core writes that line back to the L2.
#pragma once

#include <cstdint>
#include <vector>

namespace pfsim {

class ScalarDataCache {
public:
    // `bytes` of `line_bytes` lines in sets of `ways`; bytes is a whole
    // number of line_bytes x ways, and line_bytes and the number of sets are
    // powers of two (Config's checks make them so; std::invalid_argument if not).
    ScalarDataCache(uint64_t bytes, uint64_t line_bytes, uint64_t ways);

    uint64_t line_bytes() const { return line_bytes_; }
    // The GM address of the line holding `gm`.
    uint64_t line_of(uint64_t gm) const { return line_number(gm) * line_bytes_; }
    // Whether the `bytes` from `gm` (at least one) lie in one line.
    bool within_line(uint64_t gm, uint64_t bytes) const {
        return line_number(gm) == line_number(gm + bytes - 1);
    }

    // A read of the line holding `gm`: true on a hit (the line becomes its
    // set's most recent). On a miss nothing changes: the caller fetches the
    // line, then install()s it.
    bool read(uint64_t gm) {
        Way* way = find(line_number(gm));
        if (!way) return false;
        way->used = ++clock_;
        return true;
    }
    // A store to the line holding `gm`: true on a hit (the line becomes dirty
    // and its set's most recent); false on a miss, which allocates nothing.
    bool write(uint64_t gm);
    // Puts the line holding `gm` (absent) in its set as the most recent, in
    // place of an invalid way or the least recent line. True when the line
    // it replaced was dirty: `*written_back` is then that line's address.
    bool install(uint64_t gm, uint64_t* written_back);
    // dcci of one line: the line holding `gm` leaves the cache (the next read
    // misses). True when it was dirty (the caller writes it back).
    bool invalidate(uint64_t gm);
    // dcci of the whole cache: every line leaves; the addresses of the dirty
    // ones, in the order of the cache's ways.
    std::vector<uint64_t> invalidate_all();
    // The lines the cache holds (for tests).
    uint64_t lines_held() const;

private:
    struct Way {
        uint64_t tag = kInvalid;  // the line number (gm / line_bytes)
        uint64_t used = 0;        // clock_ at its last access: the set's LRU order
        bool dirty = false;
    };
    static constexpr uint64_t kInvalid = ~uint64_t{0};
    // By a shift and a mask: a 64-bit division would cost a hit tens of cycles.
    uint64_t line_number(uint64_t gm) const { return gm >> line_shift_; }
    Way* set_of(uint64_t line) { return &ways_[(line & (sets_ - 1)) * assoc_]; }
    Way* find(uint64_t line) {
        Way* set = set_of(line);
        for (uint64_t w = 0; w < assoc_; ++w) {
            if (set[w].tag == line) return &set[w];
        }
        return nullptr;
    }

    const uint64_t line_bytes_, assoc_, sets_;
    const int line_shift_;  // log2(line_bytes_)
    std::vector<Way> ways_;  // set s is ways_[s * assoc_, (s + 1) * assoc_)
    uint64_t clock_ = 0;
};

}  // namespace pfsim

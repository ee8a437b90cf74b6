#include "model/l2/l2_cache.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "model/common/payload.h"
#include "model/common/read_around_l2.h"
#include "model/common/time.h"
#include "model/common/what_if.h"

namespace pfsim {

static_assert(kMaxOutstandingMisses <= Calendar::kMaxServers, "the miss registers are one calendar's servers");

namespace {
unsigned log2_exact(uint64_t v) {
    unsigned bits = 0;
    while ((uint64_t{1} << bits) < v) ++bits;
    return bits;
}
}  // namespace

L2Cache::L2Cache(sc_core::sc_module_name name, const Config& cfg, const std::string& waves)
    : sc_module(name),
      cached("cached"),
      uncached("uncached"),
      prefetch("prefetch"),
      gm_data("gm_data"),
      gm_uncached("gm_uncached"),
      line_bytes_(cfg.bytes("l2.line_bytes")),
      line_shift_(log2_exact(line_bytes_)),  // l2.line_bytes is a power of two
      ways_(cfg.count("l2.ways")),
      sets_(cfg.bytes("l2.size") / line_bytes_ / ways_),
      slices_(cfg.count("l2.slices")),
      gm_size_(cfg.bytes("gm.size")),
      set_bits_(log2_exact(sets_)),
      index_(cfg.choice("l2.index") == "xor" ? Index::Xor : Index::Modulo),
      ideal_demand_(cfg.choice("l2.demand") == "ideal"),
      hit_latency_(cfg.time("l2.hit_latency")),
      miss_latency_(cfg.time("l2.miss_latency")),
      same_line_interval_(cfg.time("l2.same_line_interval")),
      slice_read_bw_(cfg.bandwidth("l2.slice_read_bandwidth")),
      slice_write_bw_(cfg.bandwidth("l2.slice_write_bandwidth")),
      tags_(make_tag_store(cfg, waves)),
      ready_(sets_ * ways_),
      prefetched_(sets_ * ways_),
      same_line_(sets_ * ways_, same_line_interval_),
      slice_read_(slices_),
      slice_write_(slices_),
      mshrs_(cfg.count("l2.max_outstanding_misses")),
      miss_estimate_(hit_latency_ + miss_latency_ + cfg.time("gm.read_latency")) {
    slice_read_ps_per_byte_ = 1e12 / slice_read_bw_;
    slice_write_ps_per_byte_ = 1e12 / slice_write_bw_;
    cached.register_b_transport(this, &L2Cache::transport_cached);
    uncached.register_b_transport(this, &L2Cache::transport_uncached);
    uncached.register_transport_dbg(this, &L2Cache::debug_uncached);
    prefetch.register_b_transport(this, &L2Cache::transport_prefetch);
}

uint64_t L2Cache::set_of(uint64_t addr) const {
    const uint64_t line = addr >> line_shift_;
    switch (index_) {
        case Index::Xor:
            return (line ^ (line >> set_bits_) ^ (line >> (2 * set_bits_))) & (sets_ - 1);
        case Index::Modulo:
            break;
    }
    return line & (sets_ - 1);
}

void L2Cache::warm_host_cache(uint64_t addr) const {
    const uint64_t set = set_of(addr);
    tags_->warm_host_cache(set);
    __builtin_prefetch(&ready_[set * ways_], 1);
}

int64_t L2Cache::find(uint64_t line) const {
    const uint64_t set = set_of(line * line_bytes_);
    const TagResult t = tags_->lookup(set, line, sc_core::sc_time_stamp().value());
    return t.hit ? static_cast<int64_t>(set * ways_ + t.way) : -1;
}

bool L2Cache::dirty(uint64_t addr) const {
    const uint64_t line = addr >> line_shift_;
    return tags_->lookup(set_of(addr), line, sc_core::sc_time_stamp().value()).dirty;
}

int64_t L2Cache::take_slot(uint64_t set, uint64_t line, const TagResult& t, Tick when, bool by_prefetch) {
    const auto slot = static_cast<int64_t>(set * ways_ + t.way);
    if (t.hit) return slot;
    if (t.victim_valid) {
        if (t.victim_dirty) {
            // Posted write-back: occupies GM, does not delay the access.
            gm_access(true, true, t.victim_line * line_bytes_, nullptr, line_bytes_, when);
            ++stats_.writebacks;
        }
        if (prefetched_[slot]) --prefetched_untouched_;
        if (observer_) observer_->evicted(t.victim_line, prefetched_[slot] != 0, by_prefetch, line);
    }
    prefetched_[slot] = 0;
    return slot;
}

Tick L2Cache::reserve_slice(uint64_t set, bool write, uint64_t bytes, Tick when) {
    Calendar& port = (write ? slice_write_ : slice_read_)[set & (slices_ - 1)];
    const double ps_per_byte = write ? slice_write_ps_per_byte_ : slice_read_ps_per_byte_;
    return port.reserve(when, static_cast<Tick>(static_cast<double>(bytes) * ps_per_byte + 0.5));
}

Tick L2Cache::gm_access(bool cached_path, bool write, uint64_t addr, uint8_t* buf, uint64_t len,
                        Tick issue) {
    if (direct_) return direct_->access(cached_path, write, addr, buf, len, issue);
    prepare_payload(gm_payload_, write, addr, buf, len);
    const Tick done = transport_at(cached_path ? gm_data : gm_uncached, gm_payload_, issue);
    if (gm_payload_.is_response_error()) {
        throw std::logic_error("pfsim: L2 passed GM an address outside GM");  // checked before
    }
    return done;
}

Tick L2Cache::access_line(int initiator, uint64_t line, bool write, uint8_t* buf, uint64_t offset, uint64_t len,
                          Tick issue, const AtomicAddExtension* atomic) {
    const bool overwrites_line = write && len == line_bytes_ && !atomic;
    const uint64_t set = set_of(line * line_bytes_);
    Tick start = reserve_slice(set, write, len, issue);
    const TagResult t = tags_->access(set, line, write, start, Fill::Demand);
    const int64_t slot = take_slot(set, line, t, start, false);
    Tick done;
    if (observer_) observer_->demand(line, write, t.hit, t.hit && prefetched_[slot], start, t.hit ? ready_[slot] : 0, false);
    if (t.hit) {
        ++stats_.hits;
        if (!sequential_.promised) start = same_line_.serve(static_cast<uint64_t>(slot), line, initiator, start);
        done = std::max(start + hit_latency_, ready_[slot]);
        if (prefetched_[slot]) {
            prefetched_[slot] = 0;
            --prefetched_untouched_;
        }
    } else if (ideal_demand_) {  // what-if: served as a hit, its data fetched at no cost
        ++stats_.misses;
        done = start + hit_latency_;
        ready_[slot] = done;
    } else {
        ++stats_.misses;
        // A line read piece by piece (a tile's 256-byte rows) is hit next; one
        // written (a task's output) is read soon by its consumer.
        if (write || offset + len < line_bytes_) same_line_.warm_host_cache(static_cast<uint64_t>(slot));
        // A full-line write needs no refill.
        done = miss_round_trip(true, line * line_bytes_, overwrites_line ? 0 : line_bytes_, start);
        ready_[slot] = done;
    }
    const uint64_t addr = line * line_bytes_ + offset;
    if (!buf) return done;
    if (write && atomic) {
        std::vector<uint8_t> sum(len);
        values(false, addr, sum.data(), len);
        atomic_add(atomic->element, sum.data(), buf, len);
        values(true, addr, sum.data(), len);
    } else {
        values(write, addr, buf, len);
    }
    return done;
}

Tick L2Cache::miss_round_trip(bool cached_path, uint64_t addr, uint64_t len, Tick start) {
    const Tick begin = mshrs_.reserve(start, miss_estimate_) - miss_estimate_ + hit_latency_;
    const Tick filled = len ? gm_access(cached_path, false, addr, nullptr, len, begin) : begin;
    return filled + miss_latency_;
}

Tick L2Cache::read_around(int initiator, uint64_t line, uint8_t* buf, uint64_t offset, uint64_t len, Tick issue) {
    const uint64_t set = set_of(line * line_bytes_);
    const uint64_t addr = line * line_bytes_ + offset;
    Tick start = reserve_slice(set, false, len, issue);
    const TagResult t = tags_->lookup(set, line, start);
    const auto slot = static_cast<int64_t>(set * ways_ + t.way);
    ++stats_.bypass_lines;
    Tick done;
    if (observer_) observer_->demand(line, false, t.hit, t.hit && prefetched_[slot], start, t.hit ? ready_[slot] : 0, true);
    if (t.hit) {
        ++stats_.bypass_hits;
        if (!sequential_.promised) start = same_line_.serve(static_cast<uint64_t>(slot), line, initiator, start);
        done = std::max(start + hit_latency_, ready_[slot]);
        if (prefetched_[slot]) {
            prefetched_[slot] = 0;
            --prefetched_untouched_;
        }
    } else if (ideal_demand_) {  // what-if: served as a hit
        done = start + hit_latency_;
    } else {
        // Through the alias GM sees an uncached read of the bytes asked for.
        done = miss_round_trip(false, addr, len, start);
    }
    if (buf) values(false, addr, buf, len);
    return done;
}

void L2Cache::values(bool write, uint64_t addr, uint8_t* buf, uint64_t len) {
    if (direct_) {
        if (!direct_->copy(write, addr, buf, len)) {
            throw std::logic_error("pfsim: GM refused the L2 the values of an address inside GM");  // checked before
        }
        return;
    }
    prepare_payload(values_payload_, write, addr, buf, len);
    if (gm_uncached->transport_dbg(values_payload_) != len) {
        throw std::logic_error("pfsim: GM refused the L2 the values of an address inside GM");  // checked before
    }
}

void L2Cache::transport_cached(int id, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    if (len == 0 || !in_gm(addr, len)) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const bool write = p.is_write();
    const Tick issue = issue_time(p, delay);
    uint8_t* buf = p.get_data_ptr();
    if (p.get_extension<ResidentExtension>()) {
        check_sequential(id, issue);
        install(addr, len, issue);
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    const bool around = p.get_extension<ReadAroundL2Extension>() != nullptr;
    AtomicAddExtension* atomic = nullptr;
    p.get_extension(atomic);
    if ((atomic && !buf) || (around && write)) {  // an add needs its addends; only reads go around
        check_sequential(id, issue);
        p.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    set_done(p, delay, cached_access(id, write, addr, buf, len, issue, atomic, around));
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

Tick L2Cache::read_in_place(int initiator, uint64_t addr, uint64_t len, Tick issue) {
    if (len == 0 || !in_gm(addr, len)) throw std::logic_error("pfsim: a core read in place outside GM");  // checked before
    return cached_access(initiator, false, addr, nullptr, len, issue, nullptr, false);
}

bool L2Cache::move_line(int initiator, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue,
                        Tick& done) {
    if (len == 0 || !in_gm(addr, len)) return false;
    done = cached_access(initiator, write, addr, buf, len, issue, nullptr, false);
    return true;
}

void L2Cache::check_sequential(int id, Tick issue) {
    if (!sequential_.promised) return;
    if ((sequential_.initiator >= 0 && id != sequential_.initiator) || issue < sequential_.last_done) {
        throw std::logic_error("pfsim: a cached access broke the L2's one-sequential-initiator promise");
    }
    sequential_.initiator = id;
}

Tick L2Cache::cached_access(int id, bool write, uint64_t addr, uint8_t* buf, uint64_t len, Tick issue,
                            const AtomicAddExtension* atomic, bool around) {
    check_sequential(id, issue);
    Tick done = issue;
    for (uint64_t a = addr; a < addr + len;) {
        const uint64_t line = a >> line_shift_;
        const uint64_t offset = a - (line << line_shift_);
        const uint64_t n = std::min(line_bytes_ - offset, addr + len - a);
        if (around) {
            done = std::max(done, read_around(id, line, buf, offset, n, issue));
        } else {
            done = std::max(done, access_line(id, line, write, buf, offset, n, issue, atomic));
            ++(write ? stats_.write_lines : stats_.read_lines);
        }
        if (buf) buf += n;
        a += n;
    }
    if (!around) (write ? stats_.write_bytes : stats_.read_bytes) += len;
    sequential_.last_done = done;
    return done;
}

void L2Cache::transport_uncached(int, tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    if (len == 0 || !in_gm(addr, len)) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const bool write = p.is_write();
    const Tick done = gm_access(false, write, addr, p.get_data_ptr(), len, issue_time(p, delay));
    (write ? stats_.uncached_write_bytes : stats_.uncached_read_bytes) += len;
    set_done(p, delay, done);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

unsigned L2Cache::debug_uncached(int, tlm::tlm_generic_payload& p) {
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    if (len == 0 || !in_gm(addr, len)) return 0;
    return gm_uncached->transport_dbg(p);
}

void L2Cache::install(uint64_t addr, uint64_t len, Tick at) {
    for (uint64_t line = addr / line_bytes_; line <= (addr + len - 1) / line_bytes_; ++line) {
        const uint64_t set = set_of(line * line_bytes_);
        const TagResult t = tags_->access(set, line, false, at, Fill::Prefetch);
        const int64_t slot = take_slot(set, line, t, at, true);
        if (t.hit) continue;
        ready_[slot] = at;
        prefetched_[slot] = 1;
        ++prefetched_untouched_;
        if (observer_) observer_->prefetched(line, true, at, at);
    }
}

void L2Cache::transport_prefetch(tlm::tlm_generic_payload& p, sc_core::sc_time& delay) {
    const uint64_t addr = p.get_address();
    const uint64_t len = p.get_data_length();
    if (len == 0 || !in_gm(addr, len)) {
        p.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    const Tick issue = issue_time(p, delay);
    PrefetchPacing* pacing = nullptr;
    p.get_extension(pacing);
    const Tick engine_done = pacing ? std::max(pacing->engine_done, issue) : issue;
    const uint64_t first = addr / line_bytes_;
    const uint64_t count = (addr + len - 1) / line_bytes_ - first + 1;
    if (pacing && pacing->probe) {  // a tag lookup per line: nothing allocated, no replacement state touched
        pacing->resident_bytes = 0;
        for (uint64_t line = first; line < first + count; ++line) {
            if (find(line) < 0) continue;
            const uint64_t b = std::max(addr, line * line_bytes_), e = std::min(addr + len, (line + 1) * line_bytes_);
            pacing->resident_bytes += e - b;
        }
        set_done(p, delay, issue);
        p.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    Tick done = issue;
    for (uint64_t i = 0; i < count; ++i) {
        const uint64_t line = first + i;
        // The engine moves the range at a steady rate: line i is through at pace.
        const Tick pace = issue + (engine_done - issue) * (i + 1) / count;
        const uint64_t set = set_of(line * line_bytes_);
        const TagResult t = tags_->access(set, line, false, issue, Fill::Prefetch);
        const int64_t slot = take_slot(set, line, t, issue, true);
        if (t.hit) {
            if (observer_) observer_->prefetched(line, false, issue, ready_[slot]);
            ++stats_.prefetch_resident;
            done = std::max(done, std::max(pace, ready_[slot]));
        } else {
            ++stats_.prefetch_lines;
            const Tick fetched = gm_access(true, false, line * line_bytes_, nullptr, line_bytes_, issue);
            const Tick written = reserve_slice(set, true, line_bytes_,
                                               std::max(fetched, pace));
            ready_[slot] = written;
            prefetched_[slot] = 1;
            ++prefetched_untouched_;
            if (observer_) observer_->prefetched(line, true, issue, written);
            if (corrupt_next_fill_) {  // the filled line's first byte, as every later reader sees it
                uint8_t b = 0;
                values(false, line * line_bytes_, &b, 1);
                b ^= 0x01;
                values(true, line * line_bytes_, &b, 1);
                corrupt_next_fill_ = false;
            }
            done = std::max(done, written);
        }
    }
    set_done(p, delay, done);
    p.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace pfsim

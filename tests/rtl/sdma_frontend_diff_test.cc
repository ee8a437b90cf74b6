// Differential test: the SDMA engine with the RTL front-end (rtl_stubs/
// sdma_frontend) against the engine with its C++ front-end, fed the same random
// register programming, ring contents (valid and malformed requests) and
// doorbells. Compared transaction by transaction: per channel, the requests
// executed in order (opcode, source, destination, length), then every channel's
// registers, the engine's counters and the bytes the copies wrote.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "model/sdma/rtl_frontend.h"
#include "model/sdma/sdma_engine.h"
#include "tests/support/harness.h"
#include "Vsdma_frontend.h"
#include "Vsdma_frontend_broken_arbiter.h"
#include "rtl_stubs/clocked_model.h"

namespace pfsim {
namespace {

constexpr uint64_t kRings = 1ull << 30;       // channel c's ring at kRings + c * 1 MiB
constexpr uint64_t kSources = 2ull << 30;     // what copies and prefetches read
constexpr uint64_t kCopies = 3ull << 30;      // channel c's copies land in kCopies + c * 1 MiB
constexpr unsigned kRounds = 160;

struct Side {
    test::Harness* h;
    std::vector<ExecutedRequest> log;
};

struct Stimuli {
    size_t register_writes = 0, requests = 0, malformed = 0, doorbells = 0;
    size_t total() const { return register_writes + requests + doorbells; }
};

Side& tlm_side(std::vector<Side*>& sides) { return *sides.front(); }

// One round of stimuli, applied identically to every side (the first is the TLM).
void round(std::vector<Side*>& sides, std::mt19937_64& rng, Stimuli& n, std::vector<uint32_t>& depth) {
    const uint64_t gm = Config::from_preset().bytes("gm.size");
    auto on_all = [&](auto f) {
        for (Side* s : sides) f(*s->h);
    };
    const unsigned touched = 1 + rng() % 12;
    std::vector<uint32_t> queued(48, 0);  // pushed this round: a ring never holds more than depth - 1
    for (unsigned k = 0; k < touched; ++k) {
        const unsigned c = rng() % 48;
        const uint64_t ring = kRings + (uint64_t{c} << 20);
        const unsigned roll = rng() % 100;
        const bool stopped = tlm_side(sides).h->soc.sdma.channel(c).error != SdmaError::None;
        if (depth[c] == 0 || roll < 8 || (stopped && roll < 70)) {  // (re)create the queue, sometimes badly
            const unsigned bad = rng() % 10;
            const uint64_t base = bad == 0 ? 0 : bad == 1 ? gm + (1 << 20) : ring;
            const uint32_t d = bad == 2 ? 1 : bad == 3 ? 4096 : 4 + rng() % 60;
            on_all([&](test::Harness& h) { h.setup_ring(c, base, d); });
            depth[c] = d;
            queued[c] = 0;
            n.register_writes += 2;
        }
        const uint32_t room = depth[c] > queued[c] ? depth[c] - 1 - queued[c] : 0;
        const unsigned count = rng() % (std::min<uint32_t>(room, 7) + 1);
        queued[c] += count;
        for (unsigned i = 0; i < count; ++i) {
            SdmaRequest r = rng() % 2 ? SdmaRequest::cache_prefetch(kSources + (rng() % (16 << 20)), 1 + rng() % 8192)
                                      : SdmaRequest::copy(kSources + (rng() % (16 << 20)),
                                                          kCopies + (uint64_t{c} << 20) + rng() % ((1 << 20) - 4096),
                                                          1 + rng() % 4096);
            uint8_t raw[kSdmaRequestBytes];
            r.encode(raw);
            if (rng() % 100 < 4) {  // malformed, each way the decoder checks
                ++n.malformed;
                const uint64_t outside = gm - rng() % 64;
                const uint32_t huge = 0xF0000000u;
                switch (rng() % 6) {
                    case 0: raw[0] = static_cast<uint8_t>(rng() % 64 == 11 ? 12 : rng() % 64); break;
                    case 1: raw[16] = static_cast<uint8_t>(1 + rng() % 5); break;
                    case 2: std::memset(raw + 28, 0, 4); break;
                    case 3: std::memcpy(raw + 28, &huge, 4); break;
                    case 4: std::memcpy(raw + 32, &outside, 8); break;
                    case 5:
                        raw[16] = kSdmaOpCopy;
                        std::memcpy(raw + 40, &outside, 8);
                        break;
                }
            }
            on_all([&](test::Harness& h) { h.push_raw(c, raw); });
            ++n.requests;
        }
        if (rng() % 100 < 3) {  // a tail beyond the ring
            const uint64_t tail = depth[c] + rng() % 8;
            on_all([&](test::Harness& h) { h.mmio_write(h.soc.sdma.doorbell_address(c), tail, 4); });
        } else {
            on_all([&](test::Harness& h) { h.ring(c); });
        }
        ++n.doorbells;
    }
    test::run_until_idle();
}

std::string describe(const SdmaRequest& r) {
    std::ostringstream s;
    s << (r.opcode == kSdmaOpCopy ? "copy" : "prefetch") << " 0x" << std::hex << r.src << " -> 0x" << r.dst
      << std::dec << " " << r.length << " B";
    return s.str();
}

// Differences between `a` and the reference `ref` since entry `from` of each log.
size_t compare(const Side& a, const Side& ref, size_t from_a, size_t from_ref, std::string* first) {
    size_t diffs = 0;
    auto note = [&](const std::string& what) {
        if (diffs++ == 0) *first = what;
        if (std::getenv("SDMA_DIFF_VERBOSE")) std::cout << "  " << what << "\n";
    };
    for (unsigned c = 0; c < 48; ++c) {
        std::vector<SdmaRequest> x, y;
        for (size_t i = from_a; i < a.log.size(); ++i) if (a.log[i].channel == c) x.push_back(a.log[i].request);
        for (size_t i = from_ref; i < ref.log.size(); ++i) if (ref.log[i].channel == c) y.push_back(ref.log[i].request);
        for (size_t i = 0; i < std::max(x.size(), y.size()); ++i) {
            const bool same = i < x.size() && i < y.size() && x[i].opcode == y[i].opcode && x[i].src == y[i].src &&
                              x[i].dst == y[i].dst && x[i].length == y[i].length;
            if (!same) {
                note("channel " + std::to_string(c) + " request " + std::to_string(i) + ": RTL " +
                     (i < x.size() ? describe(x[i]) : "none") + ", TLM " + (i < y.size() ? describe(y[i]) : "none"));
            }
        }
        const SdmaChannelState p = a.h->soc.sdma.channel(c), q = ref.h->soc.sdma.channel(c);
        if (p.head != q.head || p.tail != q.tail || p.error != q.error || p.completed != q.completed ||
            p.depth != q.depth || p.ring_base != q.ring_base) {
            note("channel " + std::to_string(c) + " registers: RTL head " + std::to_string(p.head) + " tail " +
                 std::to_string(p.tail) + " error " + sdma_error_name(p.error) + " completed " +
                 std::to_string(p.completed) + "; TLM head " + std::to_string(q.head) + " tail " +
                 std::to_string(q.tail) + " error " + sdma_error_name(q.error) + " completed " +
                 std::to_string(q.completed));
        }
    }
    return diffs;
}

class SdmaFrontendRtl : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        tlm_.h = &test::make_harness(test::config_with({}));
        rtl_.h = &test::make_harness(test::config_with({"sdma.frontend=rtl"}));
        const Config broken_cfg = test::config_with({"sdma.frontend=rtl"});
        SocOptions broken_arbiter;
        broken_arbiter.sdma_frontend =
            std::make_unique<RtlFrontendOf<Vsdma_frontend_broken_arbiter, VerilatedVcdC>>(broken_cfg);
        broken_.h = &test::make_harness(broken_cfg, std::move(broken_arbiter));
        for (Side* s : {&tlm_, &rtl_, &broken_}) s->h->soc.sdma.log_requests(&s->log);
        test::elaborate();
    }
    static Side tlm_, rtl_, broken_;
};
Side SdmaFrontendRtl::tlm_, SdmaFrontendRtl::rtl_, SdmaFrontendRtl::broken_;

TEST_F(SdmaFrontendRtl, MatchesTheTlmFrontEndOverTenThousandRandomStimuli) {
    std::vector<Side*> sides = {&tlm_, &rtl_, &broken_};
    std::mt19937_64 rng(2026);
    std::vector<uint32_t> depth(48, 0);
    Stimuli n;
    size_t rtl_diffs = 0, broken_diffs = 0, at_tlm = 0, at_rtl = 0, at_broken = 0;
    std::string first_rtl, first_broken, ignored;
    while (n.total() < 10000) {
        round(sides, rng, n, depth);
        if (std::getenv("SDMA_DIFF_VERBOSE")) std::cout << "round at " << n.total() << "\n";
        rtl_diffs += compare(rtl_, tlm_, at_rtl, at_tlm, rtl_diffs ? &ignored : &first_rtl);
        broken_diffs += compare(broken_, tlm_, at_broken, at_tlm, broken_diffs ? &ignored : &first_broken);
        at_tlm = tlm_.log.size();
        at_rtl = rtl_.log.size();
        at_broken = broken_.log.size();
        ASSERT_LT(n.total(), 40000u) << "stimuli stopped growing";
    }
    std::cout << n.total() << " stimuli: " << n.register_writes << " register writes, " << n.requests
              << " requests (" << n.malformed << " malformed), " << n.doorbells << " doorbells; " << tlm_.log.size()
              << " requests executed, " << tlm_.h->soc.sdma.stats().channel_errors << " channel errors\n";
    EXPECT_EQ(rtl_diffs, 0u) << first_rtl;
    EXPECT_EQ(rtl_.h->soc.sdma.stats().requests, tlm_.h->soc.sdma.stats().requests);
    EXPECT_EQ(rtl_.h->soc.sdma.stats().channel_errors, tlm_.h->soc.sdma.stats().channel_errors);
    EXPECT_EQ(rtl_.h->soc.sdma.stats().copy_bytes, tlm_.h->soc.sdma.stats().copy_bytes);
    // The stimuli reach every error and plenty of work.
    EXPECT_GT(tlm_.log.size(), 2000u);
    EXPECT_GT(tlm_.h->soc.sdma.stats().channel_errors, 40u);
    // The copies wrote the same bytes.
    std::vector<uint8_t> a(48 << 20), b(48 << 20);
    rtl_.h->uncached_read(kCopies, a.data(), a.size(), test::now());
    tlm_.h->uncached_read(kCopies, b.data(), b.size(), test::now());
    EXPECT_TRUE(a == b) << "copy destinations differ";
    // Negative control: the arbiter that never grants channel 47 is caught.
    EXPECT_GT(broken_diffs, 0u);
    std::cout << "broken arbiter: " << broken_diffs << " differences; first: " << first_broken << "\n";
}

// Cycle by cycle against a reference round-robin arbiter: every channel has
// requests, the memory port accepts one read per cycle; the RTL must issue one
// fetch per cycle, in round-robin order from the channel after the last grant,
// at ring base + 64 x index. Returns the first cycle that differs, or "".
template <class Model>
std::string round_robin_mismatch(unsigned batches) {
    ClockedModel<Model, VerilatedVcdC> rtl("sdma_frontend", 541, "");
    Model& p = rtl.pins();
    const Config cfg = Config::from_preset();
    p.cfg_gm_size = cfg.bytes("gm.size");
    p.cfg_max_request_bytes = cfg.bytes("sdma.max_request_bytes");
    p.cfg_max_depth = static_cast<uint32_t>(cfg.count("sdma.queue_depth"));
    p.cfg_tail_offset = static_cast<uint32_t>(cfg.bytes("sdma.doorbell_tail_offset"));
    rtl.reset(2);
    auto write = [&](unsigned c, uint32_t reg, uint64_t value) {
        p.reg_valid = 1;
        p.reg_write = 1;
        p.reg_channel = c;
        p.reg_addr = reg;
        p.reg_wdata = value;
        rtl.cycle();
        p.reg_valid = 0;
        p.reg_write = 0;
    };
    constexpr unsigned kDepth = 64;
    for (unsigned c = 0; c < 48; ++c) {
        write(c, SdmaRegister::kRingBase, kRings + (uint64_t{c} << 20));
        write(c, SdmaRegister::kRingDepth, kDepth);
        write(c, static_cast<uint32_t>(p.cfg_tail_offset), batches);
    }
    uint8_t raw[kSdmaRequestBytes];
    SdmaRequest::cache_prefetch(kSources, 4096).encode(raw);
    p.chan_enable = (uint64_t{1} << 48) - 1;
    p.mem_req_ready = 1;
    // Each edge: a request presented with the port ready is accepted.
    std::vector<std::pair<unsigned, uint64_t>> accepted;
    std::vector<uint64_t> accepted_cycle;
    auto edge = [&] {
        if (p.mem_req_valid) {
            accepted.emplace_back(p.mem_req_id, p.mem_req_addr);
            accepted_cycle.push_back(rtl.cycles());
        }
        rtl.cycle();
    };
    for (unsigned batch = 0; batch < batches; ++batch) {
        for (unsigned i = 0; i < 52; ++i) edge();
        for (unsigned c = 0; c < 48; ++c) {  // answer every read
            p.mem_resp_valid = 1;
            p.mem_resp_id = c;
            p.mem_resp_error = 0;
            for (unsigned w = 0; w < 16; ++w) std::memcpy(&p.mem_resp_data[w], raw + 4 * w, 4);
            edge();
        }
        p.mem_resp_valid = 0;
        for (unsigned c = 0; c < 48; ++c) {  // take every request: the channel may fetch its next
            p.take_valid = 1;
            p.take_channel = c;
            rtl.settle();
            if (p.take_error != 0 || p.take_length != 4096) return "channel " + std::to_string(c) + ": bad decode";
            edge();
        }
        p.take_valid = 0;
    }
    for (unsigned i = 0; i < 4; ++i) edge();
    // The reference: channel after channel, one per cycle while all are waiting.
    std::vector<unsigned> index(48, 0);
    for (size_t i = 0; i < std::max<size_t>(accepted.size(), 48 * batches); ++i) {
        const unsigned c = i % 48;
        const uint64_t addr = kRings + (uint64_t{c} << 20) + index[c]++ * kSdmaRequestBytes;
        if (i >= accepted.size() || accepted[i].first != c || accepted[i].second != addr) {
            return "fetch " + std::to_string(i) + ": expected channel " + std::to_string(c) + ", got " +
                   (i < accepted.size() ? "channel " + std::to_string(accepted[i].first) : "none");
        }
        // Batch 0 issues one fetch per cycle, back to back.
        if (i > 0 && i < 48 && accepted_cycle[i] != accepted_cycle[i - 1] + 1) {
            return "fetch " + std::to_string(i) + " is not on the cycle after fetch " + std::to_string(i - 1);
        }
    }
    return "";
}

TEST(SdmaFrontendRtlPins, GrantsOneFetchPerCycleInRoundRobinOrder) {
    EXPECT_EQ(round_robin_mismatch<Vsdma_frontend>(8), "");
}

TEST(SdmaFrontendRtlPins, NegativeControlTheArbiterThatSkipsChannel47IsCaught) {
    const std::string m = round_robin_mismatch<Vsdma_frontend_broken_arbiter>(8);
    EXPECT_NE(m, "");
    std::cout << "broken arbiter: " << m << "\n";
}

}  // namespace
}  // namespace pfsim

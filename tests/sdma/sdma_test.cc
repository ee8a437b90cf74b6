#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hw/sdma_request.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

constexpr uint64_t kRing0 = 32ull << 30;
constexpr uint64_t kRing1 = kRing0 + (1 << 20);
constexpr Tick kUs = 1000000;

TEST(SdmaRequest, EncodesTheA2a3ByteLayout) {
    SdmaRequest r = SdmaRequest::cache_prefetch(0x123456789A, 1 << 20);
    r.stream_id = 0x0102;
    r.task_id = 0x0304;
    uint8_t raw[kSdmaRequestBytes];
    r.encode(raw);
    EXPECT_EQ(raw[0], 11);                       // type
    EXPECT_EQ(raw[4], 0x02);                     // rt_stream_id, little-endian
    EXPECT_EQ(raw[5], 0x01);
    EXPECT_EQ(raw[6], 0x04);                     // task_id
    EXPECT_EQ(raw[14], 240);                     // kernel credit (a2a3)
    EXPECT_EQ(raw[16], 6);                       // opcode: cache prefetch
    uint32_t word;
    std::memcpy(&word, raw + 16, 4);
    EXPECT_EQ((word >> 9) & 0xF, 0xFu);          // sssv, dssv, sns, dns
    EXPECT_EQ((word >> 13) & 0xF, 6u);           // qos
    EXPECT_EQ((word >> 19) & 0xFF, 63u);         // partid
    uint32_t length;
    std::memcpy(&length, raw + 28, 4);
    EXPECT_EQ(length, 1u << 20);
    uint64_t src, dst;
    std::memcpy(&src, raw + 32, 8);
    std::memcpy(&dst, raw + 40, 8);
    EXPECT_EQ(src, 0x123456789Au);
    EXPECT_EQ(dst, 0u);
    for (int i : {1, 2, 3, 8, 9, 10, 11, 12, 13, 15, 20, 48, 56, 63}) EXPECT_EQ(raw[i], 0) << i;
    EXPECT_EQ(SdmaRequest::decode(raw), r);
    const SdmaRequest flag = SdmaRequest::copy(0x1000, 0x2000, 8);
    flag.encode(raw);
    EXPECT_EQ(raw[16], 0);
    EXPECT_EQ(SdmaRequest::decode(raw), flag);
}

class Sdma : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        for (int i = 0; i < 20; ++i) benches_.push_back(&test::make_harness(test::config_with({})));
        depth4_ = &test::make_harness(test::config_with({"sdma.queue_depth=4"}));
        small_max_ = &test::make_harness(test::config_with({"sdma.max_request_bytes=4KiB",
                                                             "prefetch.request_bytes=4KiB"}));
        fast_aggregate_ = &test::make_harness(test::config_with({"sdma.bandwidth=1120GB/s", "sdma.channel_switch_cost=0ns"}));
        no_switch_ = &test::make_harness(test::config_with({"sdma.channel_switch_cost=0ns"}));
        posted_ = &test::make_harness(test::config_with({"sdma.doorbell_write=posted"}));
        setup_pending_ = &test::make_harness(test::config_with({"sdma.channel_setup=pending"}));
        unchecked_ = &test::make_harness(test::config_with({"sdma.resident_check_bandwidth=280GB/s"}));
        test::elaborate();
    }
    // A fresh engine for each test.
    test::Harness& fresh() { return *benches_.at(next_++); }
    // Programs and warms channel c.
    static void warm(test::Harness& h, unsigned c, uint64_t ring) {
        h.setup_ring(c, ring, 2048);
        h.ring(c);
        test::run_until_idle();
    }
    static std::vector<test::Harness*> benches_;
    static test::Harness *depth4_, *small_max_, *fast_aggregate_, *no_switch_, *posted_, *setup_pending_, *unchecked_;
    static size_t next_;
};
std::vector<test::Harness*> Sdma::benches_;
test::Harness* Sdma::depth4_ = nullptr;
test::Harness* Sdma::small_max_ = nullptr;
test::Harness* Sdma::fast_aggregate_ = nullptr;
test::Harness* Sdma::no_switch_ = nullptr;
test::Harness* Sdma::posted_ = nullptr;
test::Harness* Sdma::setup_pending_ = nullptr;
test::Harness* Sdma::unchecked_ = nullptr;
size_t Sdma::next_ = 0;

TEST_F(Sdma, CopyMovesBytesAndPrefetchFillsL2) {
    test::Harness& h = fresh();
    warm(h, 0, kRing0);
    const uint64_t src = 1ull << 30, dst = 2ull << 30;
    std::vector<uint8_t> data(3000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<uint8_t>(i * 13);
    h.uncached_write(src, data.data(), data.size(), test::now());
    h.push_request(0, SdmaRequest::copy(src, dst, 3000));
    h.push_request(0, SdmaRequest::cache_prefetch(src, 3000));
    h.ring(0);
    test::run_until_idle();
    std::vector<uint8_t> back(3000);
    h.soc.gm.store().read(dst, back.data(), back.size());
    EXPECT_EQ(back, data);
    // 3000 bytes from a line boundary: 6 lines, none delivered to a core.
    EXPECT_EQ(h.soc.l2.stats().prefetch_lines, 6u);
    EXPECT_EQ(h.soc.l2.stats().hits + h.soc.l2.stats().misses, 0u);
    EXPECT_TRUE(h.soc.l2.resident(src + 2999));
    EXPECT_FALSE(h.soc.l2.resident(dst));  // copies go the uncached way
    EXPECT_EQ(h.mmio_read(h.soc.sdma.register_address(0, SdmaRegister::kCompleted), 8), 2u);
    EXPECT_EQ(h.mmio_read(h.soc.sdma.register_address(0, SdmaRegister::kHead), 4), 2u);
}

TEST_F(Sdma, RequestsOfOneChannelCompleteInOrder) {
    test::Harness& h = fresh();
    warm(h, 0, kRing0);
    const uint64_t big = 4ull << 30, flag_src = 5ull << 30, flag_dst = 6ull << 30;
    const uint64_t one = 1;
    h.uncached_write(flag_src, &one, 8, test::now());
    for (int i = 0; i < 4; ++i) h.push_request(0, SdmaRequest::cache_prefetch(big + i * (1 << 20), 1 << 20));
    h.push_request(0, SdmaRequest::copy(flag_src, flag_dst, 8));
    h.ring(0);
    // Step through time; the flag may only appear once every earlier request is done.
    bool seen = false;
    for (int step = 0; step < 200 && !seen; ++step) {
        sc_core::sc_start(sc_core::sc_time(200, sc_core::SC_NS));
        uint64_t flag = 0;
        h.soc.gm.store().read(flag_dst, &flag, 8);
        const uint64_t completed = h.soc.sdma.channel(0).completed;
        if (flag == 1) {
            seen = true;
            EXPECT_GE(completed, 4u);
            EXPECT_EQ(h.soc.l2.stats().prefetch_lines, 4u * 2048u);
        } else {
            EXPECT_LE(completed, 4u);
        }
    }
    EXPECT_TRUE(seen);
    test::run_until_idle();
}

TEST_F(Sdma, ChannelsRunInParallel) {
    // Ten small copies on one channel, against five on each of two channels.
    auto run = [](test::Harness& h, unsigned channels) {
        for (unsigned c = 0; c < channels; ++c) warm(h, c, kRing0 + c * (1 << 20));
        const Tick start = test::now();
        for (unsigned c = 0; c < channels; ++c) {
            for (unsigned i = 0; i < 10 / channels; ++i) {
                h.push_request(c, SdmaRequest::copy(1ull << 30, (2ull << 30) + 64 * (c * 10 + i), 8));
            }
            h.ring(c);
        }
        test::run_until_idle();
        Tick last = 0;
        for (unsigned c = 0; c < channels; ++c) last = std::max(last, h.soc.sdma.channel(c).last_done);
        return last - start;
    };
    const Tick serial = run(fresh(), 1);
    const Tick parallel = run(fresh(), 2);
    EXPECT_GE(serial, 10 * 700000u);  // start-up is not hidden within a channel
    EXPECT_LT(parallel, serial * 6 / 10);
}

TEST_F(Sdma, AggregateBandwidthLimitsParallelChannels) {
    // Four channels of 4 MiB each: with the aggregate limit at the channel rate
    // they take at least as long as one channel moving 16 MiB; with 4 x the limit
    // (and no channel switch cost), about four times less.
    auto run = [](test::Harness& h) {
        for (unsigned c = 0; c < 4; ++c) warm(h, c, kRing0 + c * (1 << 20));
        const Tick start = test::now();
        for (unsigned c = 0; c < 4; ++c) {
            for (int i = 0; i < 4; ++i) {
                h.push_request(c, SdmaRequest::cache_prefetch((8ull << 30) + (c * 4 + i) * (1ull << 20), 1 << 20));
            }
            h.ring(c);
        }
        test::run_until_idle();
        return test::now() - start;
    };
    const Tick limited = run(fresh());
    const Tick wide = run(*fast_aggregate_);
    const Tick sixteen_mib_at_280 = static_cast<Tick>(16.0 * (1 << 20) / 280e9 * 1e12);
    EXPECT_GE(limited, sixteen_mib_at_280);
    EXPECT_LT(wide, limited * 4 / 10);
}

TEST_F(Sdma, ASecondStreamLowersTheAggregateThroughChannelSwitches) {
    // 16 MiB on one channel, then 2 x 8 MiB on two channels at once: the engine
    // alternates between the two channels' pieces and pays sdma.channel_switch_cost
    // at each turn, so two streams move less in total than one. Without the
    // switch cost (negative control) they move the same.
    auto run = [](test::Harness& h, unsigned channels) {
        for (unsigned c = 0; c < channels; ++c) warm(h, c, kRing0 + c * (1 << 20));
        const Tick start = test::now();
        const uint64_t switches = h.soc.sdma.stats().channel_switches;
        const uint64_t each = (16ull << 20) / channels;
        for (unsigned c = 0; c < channels; ++c) {
            h.push_request(c, SdmaRequest::cache_prefetch((8ull << 30) + c * each, static_cast<uint32_t>(each)));
            h.ring(c);
        }
        test::run_until_idle();
        // 256 pieces of 64 KiB: one stream never switches, two switch at almost every piece.
        const uint64_t turned = h.soc.sdma.stats().channel_switches - switches;
        if (channels == 1) {
            EXPECT_EQ(turned, 0u);
        } else {
            EXPECT_GT(turned, 200u);
        }
        return static_cast<double>(test::now() - start);
    };
    const double one = run(fresh(), 1), two = run(fresh(), 2);
    const Config cfg = test::config_with({});
    const double piece = 65536 / 280e9 * 1e12, turn = static_cast<double>(cfg.time("sdma.channel_switch_cost"));
    EXPECT_NEAR(two / one, (piece + turn) / piece, 0.05);
    EXPECT_GT(two, 1.5 * one);
    const double unswitched = run(*no_switch_, 2);
    EXPECT_NEAR(unswitched / one, 1.0, 0.05);
}

TEST_F(Sdma, ColdChannelsPayOnceSerialisedInTheEngine) {
    test::Harness& h = fresh();
    const Tick cold = 92 * kUs;
    h.setup_ring(0, kRing0, 2048);
    h.setup_ring(1, kRing1, 2048);
    const Tick start = test::now();
    h.push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 8));
    h.ring(0);
    h.push_request(1, SdmaRequest::copy(1ull << 30, 3ull << 30, 8));
    h.ring(1);
    test::run_until_idle();
    const Tick first = std::min(h.soc.sdma.channel(0).last_done, h.soc.sdma.channel(1).last_done) - start;
    const Tick second = std::max(h.soc.sdma.channel(0).last_done, h.soc.sdma.channel(1).last_done) - start;
    EXPECT_GE(first, cold);
    EXPECT_LT(first, cold + 5 * kUs);
    EXPECT_GE(second, 2 * cold);  // the publications do not overlap
    EXPECT_EQ(h.soc.sdma.stats().cold_starts, 2u);
    // Warm now: the same request again costs microseconds.
    const Tick again = test::now();
    h.push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 8));
    h.ring(0);
    test::run_until_idle();
    EXPECT_LT(h.soc.sdma.channel(0).last_done - again, 5 * kUs);
    EXPECT_EQ(h.soc.sdma.stats().cold_starts, 2u);
}

// The engine publishes one doorbell at a time: four warm channels rung at the
// same moment see their writes complete sdma.doorbell_latency apart, and each
// request starts only after its own publication. Posted doorbells (the
// negative control) all complete at once and are seen together.
TEST_F(Sdma, DoorbellsArePublishedOneAtATime) {
    for (test::Harness* h : {&fresh(), posted_}) {
        const bool posted = h == posted_;
        for (unsigned c = 0; c < 4; ++c) warm(*h, c, kRing0 + c * (1 << 20));
        const Tick latency = 500000;  // the preset's sdma.doorbell_latency, 0.5 us
        const Tick start = test::now();
        std::vector<Tick> done;
        for (unsigned c = 0; c < 4; ++c) {
            h->push_request(c, SdmaRequest::copy(1ull << 30, (2ull << 30) + c * 64, 8));
            done.push_back(h->ring(c) - start);
        }
        test::run_until_idle();
        for (unsigned c = 0; c < 4; ++c) {
            EXPECT_EQ(done[c], posted ? 0 : (c + 1) * latency) << "channel " << c << (posted ? " posted" : "");
            EXPECT_GE(h->soc.sdma.channel(c).last_done - start, (posted ? 1 : c + 1) * latency) << c;
        }
    }
}

// With sdma.channel_setup = pending (a fresh process), a channel's first
// doorbell that submits requests pays sdma.channel_setup_cost inside the
// engine's publication, one channel at a time; the warm-up's doorbell (the
// unchanged tail) does not, and a set-up channel does not pay again. With the
// set-up done (the default, the negative control) nobody pays it.
TEST_F(Sdma, AChannelsFirstSubmissionPaysItsSetUpSerialisedInTheEngine) {
    for (test::Harness* h : {setup_pending_, &fresh()}) {
        const bool pending = h == setup_pending_;
        const Tick setup = 250 * kUs, latency = 500000;  // the preset's sdma.channel_setup_cost and doorbell_latency
        for (unsigned c = 0; c < 2; ++c) warm(*h, c, kRing0 + c * (1 << 20));
        EXPECT_EQ(h->soc.sdma.stats().channel_setups, 0u);
        const Tick start = test::now();
        std::vector<Tick> done;
        for (unsigned c = 0; c < 2; ++c) {
            h->push_request(c, SdmaRequest::copy(1ull << 30, (2ull << 30) + c * 64, 8));
            done.push_back(h->ring(c) - start);
        }
        test::run_until_idle();
        for (unsigned c = 0; c < 2; ++c) {
            EXPECT_EQ(done[c], (c + 1) * (latency + (pending ? setup : 0))) << c << (pending ? " pending" : " done");
            EXPECT_GE(h->soc.sdma.channel(c).last_done - start, done[c]) << c;
        }
        EXPECT_EQ(h->soc.sdma.stats().channel_setups, pending ? 2u : 0u);
        const Tick again = test::now();
        h->push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 8));
        EXPECT_EQ(h->ring(0) - again, latency);
        test::run_until_idle();
        EXPECT_EQ(h->soc.sdma.stats().channel_setups, pending ? 2u : 0u);
    }
}

// A prefetch of lines already resident moves no data: its bytes pass the
// engine's residency check at sdma.resident_check_bandwidth (3 TB/s), about ten
// times faster than the first prefetch that brought them in. Negative control:
// with the check as slow as the engine's data rate, the second takes as long.
TEST_F(Sdma, APrefetchOfResidentLinesOnlyPassesTheResidencyCheck) {
    for (test::Harness* h : {&fresh(), unchecked_}) {
        const bool checked = h != unchecked_;
        warm(*h, 0, kRing0);
        const uint64_t src = 12ull << 30, bytes = 16ull << 20;
        auto prefetch = [&] {
            const Tick start = test::now();
            h->push_request(0, SdmaRequest::cache_prefetch(src, static_cast<uint32_t>(bytes)));
            h->ring(0);
            test::run_until_idle();
            return static_cast<double>(h->soc.sdma.channel(0).last_done - start);
        };
        const double cold = prefetch(), resident = prefetch();
        EXPECT_EQ(h->soc.sdma.stats().resident_check_bytes, bytes);
        EXPECT_EQ(h->soc.l2.stats().prefetch_resident, bytes / 512);
        if (checked) {
            EXPECT_LT(resident, cold / 8) << cold << " " << resident;
            EXPECT_NEAR(resident / 1e6, bytes / 3e12 * 1e6 + 1.1, 0.6);  // + doorbell and start-up, us
        } else {
            EXPECT_NEAR(resident / cold, 1.0, 0.05);
        }
    }
}

TEST_F(Sdma, LargePrefetchShowsThePerRequestStartUp) {
    test::Harness& h = fresh();
    warm(h, 0, kRing0);
    const Tick start = test::now();
    for (int i = 0; i < 16; ++i) h.push_request(0, SdmaRequest::cache_prefetch((10ull << 30) + i * (1ull << 20), 1 << 20));
    h.ring(0);
    test::run_until_idle();
    const double seconds = static_cast<double>(h.soc.sdma.channel(0).last_done - start) / 1e12;
    const double gbps = 16.0 * (1 << 20) / seconds / 1e9;
    // 1 MiB at 280 GB/s = 3.745 us, plus 0.7 us start-up: about 236 GB/s.
    EXPECT_GT(gbps, 220.0);
    EXPECT_LT(gbps, 250.0);
}

struct BadRequest {
    const char* name;
    SdmaError expected;
    void (*mutate)(uint8_t* raw);
};

TEST_F(Sdma, MalformedRequestsStopTheirChannelWithAReadableCode) {
    const uint64_t gm = 64ull << 30;
    static uint64_t gm_size = gm;
    const BadRequest cases[] = {
        {"type 10", SdmaError::BadType, [](uint8_t* r) { r[0] = 10; }},
        {"opcode 3", SdmaError::BadOpcode, [](uint8_t* r) { r[16] = 3; }},
        {"zero length", SdmaError::ZeroLength, [](uint8_t* r) { std::memset(r + 28, 0, 4); }},
        {"oversized", SdmaError::Oversized, [](uint8_t* r) { uint32_t n = 0x20000000; std::memcpy(r + 28, &n, 4); }},
        {"source outside GM", SdmaError::SourceOutsideGm, [](uint8_t* r) { std::memcpy(r + 32, &gm_size, 8); }},
        {"destination outside GM", SdmaError::DestinationOutsideGm,
         [](uint8_t* r) { uint64_t d = gm_size - 4; std::memcpy(r + 40, &d, 8); }},
    };
    test::Harness& h = fresh();
    unsigned c = 0;
    for (const BadRequest& bad : cases) {
        warm(h, c, kRing0 + c * (1 << 20));
        uint8_t raw[kSdmaRequestBytes];
        SdmaRequest::copy(1ull << 30, 2ull << 30, 64).encode(raw);
        bad.mutate(raw);
        h.push_raw(c, raw);
        h.push_request(c, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));  // never runs
        h.ring(c);
        test::run_until_idle();  // returns: nothing hangs
        EXPECT_EQ(h.soc.sdma.channel(c).error, bad.expected) << bad.name;
        EXPECT_EQ(h.mmio_read(h.soc.sdma.register_address(c, SdmaRegister::kError), 4),
                  static_cast<uint64_t>(bad.expected)) << bad.name;
        EXPECT_EQ(h.soc.sdma.channel(c).completed, 0u) << bad.name;
        ++c;
    }
    // A stopped channel ignores later doorbells; other channels carry on.
    h.ring(0);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 0u);
    warm(h, c, kRing0 + c * (1 << 20));
    h.push_request(c, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));
    h.ring(c);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(c).error, SdmaError::None);
    EXPECT_EQ(h.soc.sdma.channel(c).completed, 1u);
    EXPECT_EQ(h.soc.sdma.stats().channel_errors, 6u);
}

// The engine runs only the opcodes its table implements (copy 0, cache
// prefetch 6); any other stops the channel before a byte moves, whatever the
// rest of the request says: it never runs as a copy.
TEST_F(Sdma, AnOpcodeTheEngineDoesNotImplementMovesNothing) {
    test::Harness& h = fresh();
    const uint64_t src = 3ull << 30, dst = 4ull << 30;
    const uint32_t pattern = 0x5A5A5A5A;
    h.soc.gm.store().write(src, &pattern, 4);
    const SdmaStats before = h.soc.sdma.stats();
    unsigned c = 0;
    for (uint8_t code : {1, 5, 7, 8, 255}) {
        warm(h, c, kRing0 + c * (1 << 20));
        uint8_t raw[kSdmaRequestBytes];
        SdmaRequest::copy(src, dst, 64).encode(raw);
        raw[16] = code;
        h.push_raw(c, raw);
        h.ring(c);
        test::run_until_idle();
        EXPECT_EQ(h.soc.sdma.channel(c).error, SdmaError::BadOpcode) << int{code};
        ++c;
    }
    uint32_t at_dst = 0;
    h.read(dst, &at_dst, 4, test::now());
    EXPECT_EQ(at_dst, 0u);
    EXPECT_EQ(h.soc.sdma.stats().requests, before.requests);
    EXPECT_EQ(h.soc.sdma.stats().copy_bytes, before.copy_bytes);
    EXPECT_EQ(h.soc.sdma.stats().prefetch_bytes, before.prefetch_bytes);
    // Negative control: the same request with opcode 0 copies.
    warm(h, c, kRing0 + c * (1 << 20));
    h.push_request(c, SdmaRequest::copy(src, dst, 64));
    h.ring(c);
    test::run_until_idle();
    h.read(dst, &at_dst, 4, test::now());
    EXPECT_EQ(at_dst, pattern);
}

TEST_F(Sdma, DoorbellErrors) {
    test::Harness& h = fresh();
    // Rung before its ring was configured.
    h.mmio_write(h.soc.sdma.doorbell_address(0), 1, 4);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).error, SdmaError::NotConfigured);
    // A tail beyond the ring.
    h.setup_ring(1, kRing1, 16);
    h.mmio_write(h.soc.sdma.doorbell_address(1), 16, 4);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(1).error, SdmaError::TailOutOfRange);
    // A ring whose requests lie outside GM.
    h.setup_ring(2, 64ull << 30, 16);
    h.mmio_write(h.soc.sdma.doorbell_address(2), 2, 4);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(2).error, SdmaError::RingOutsideGm);
}

TEST_F(Sdma, RingOfDepthFourWrapsAndHoldsThreeRequests) {
    test::Harness& h = *depth4_;
    h.setup_ring(0, kRing0, 4);
    h.ring(0);
    test::run_until_idle();
    // Ten requests, at most depth - 1 = 3 in the ring at a time, wrapping round.
    for (int batch = 0; batch < 4; ++batch) {
        for (int i = 0; i < 3 && batch * 3 + i < 10; ++i) {
            h.push_request(0, SdmaRequest::copy(1ull << 30, (2ull << 30) + 64 * (batch * 3 + i), 8));
        }
        h.ring(0);
        test::run_until_idle();
    }
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 10u);
    EXPECT_EQ(h.soc.sdma.channel(0).head, 10u % 4);
    EXPECT_EQ(h.soc.sdma.channel(0).error, SdmaError::None);
    // A depth larger than sdma.queue_depth is refused.
    h.setup_ring(1, kRing1, 8);
    h.mmio_write(h.soc.sdma.doorbell_address(1), 1, 4);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(1).error, SdmaError::NotConfigured);
}

TEST_F(Sdma, LengthAtTheLimitPassesOneByteMoreIsRefused) {
    test::Harness& h = *small_max_;
    warm(h, 0, kRing0);
    h.push_request(0, SdmaRequest::cache_prefetch(1ull << 30, 4096));
    h.ring(0);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 1u);
    h.push_request(0, SdmaRequest::cache_prefetch(1ull << 30, 4097));
    h.ring(0);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).error, SdmaError::Oversized);
}

// Injected faults (pfsim run --inject, session/faults.h). Each counts from the
// moment it is set; warm()'s doorbell (an empty ring) comes before. They are the
// TLM front-end's: the RTL twin of this test checks the engine refuses them.
bool refused_by_rtl(test::Harness& h, const SdmaFaults& f) {
    const char* set = std::getenv("PFSIM_TEST_SET");
    if (!set || std::string(set).find("sdma.frontend=rtl") == std::string::npos) return false;
    EXPECT_THROW(h.soc.sdma.inject(f), std::invalid_argument);
    return true;
}

TEST_F(Sdma, AnInjectedErrorStopsTheChannelTakingUpTheKthRequest) {
    test::Harness& h = fresh();
    warm(h, 0, kRing0);
    warm(h, 1, kRing0 + (1 << 20));
    SdmaFaults f;
    f.error_at_request = 3;
    if (refused_by_rtl(h, f)) return;
    h.soc.sdma.inject(f);
    for (int i = 0; i < 2; ++i) h.push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));
    h.ring(0);
    test::run_until_idle();
    h.push_request(1, SdmaRequest::cache_prefetch(3ull << 30, 4096));  // the third request
    h.push_request(1, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));  // never runs
    h.ring(1);
    test::run_until_idle();  // returns: a stopped channel does not hang the engine
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 2u);
    EXPECT_EQ(h.soc.sdma.channel(0).error, SdmaError::None);
    EXPECT_EQ(h.soc.sdma.channel(1).completed, 0u);
    EXPECT_EQ(h.mmio_read(h.soc.sdma.register_address(1, SdmaRegister::kError), 4),
              static_cast<uint64_t>(SdmaError::InjectedFault));
    EXPECT_STREQ(sdma_error_name(h.soc.sdma.channel(1).error), "injected_fault");
    ASSERT_EQ(h.soc.sdma.fault_events().size(), 1u);
    const SdmaFaultEvent& e = h.soc.sdma.fault_events()[0];
    EXPECT_STREQ(e.kind, "sdma-error");
    EXPECT_EQ(e.channel, 1u);
    EXPECT_EQ(e.ordinal, 3u);
    EXPECT_EQ(e.ring_slot, 0u);  // the channel's first request
    EXPECT_EQ(e.request.opcode, kSdmaOpCachePrefetch);
    EXPECT_EQ(h.soc.l2.stats().prefetch_lines, 0u);  // refused before a byte moved
}

TEST_F(Sdma, ALostDoorbellLeavesItsRequestsUntilTheNextDoorbell) {
    test::Harness& h = fresh();
    warm(h, 0, kRing0);
    SdmaFaults f;
    f.lose_doorbell = 1;
    if (refused_by_rtl(h, f)) return;
    h.soc.sdma.inject(f);
    h.push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));
    h.ring(0);  // lost
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 0u);
    EXPECT_EQ(h.soc.sdma.queue_depth(0), 0u);  // the engine never saw the new tail
    ASSERT_EQ(h.soc.sdma.fault_events().size(), 1u);
    EXPECT_STREQ(h.soc.sdma.fault_events()[0].kind, "doorbell-lost");
    h.push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));
    h.ring(0);  // its tail covers both
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 2u);
    EXPECT_EQ(h.soc.sdma.channel(0).error, SdmaError::None);
    EXPECT_EQ(h.soc.sdma.fault_events().size(), 1u);  // one doorbell only
}

TEST_F(Sdma, AStalledEngineFetchesNothingAndStaysBusy) {
    test::Harness& h = fresh();
    warm(h, 0, kRing0);
    const uint64_t fetched = h.soc.sdma.stats().request_fetch_bytes;
    SdmaFaults f;
    f.stall = true;
    if (refused_by_rtl(h, f)) return;
    h.soc.sdma.inject(f);
    for (int i = 0; i < 3; ++i) h.push_request(0, SdmaRequest::copy(1ull << 30, 2ull << 30, 64));
    h.ring(0);
    sc_core::sc_start(sc_core::sc_time(1, sc_core::SC_MS));
    EXPECT_EQ(h.soc.sdma.stats().request_fetch_bytes, fetched);
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 0u);
    EXPECT_TRUE(h.soc.sdma.channel(0).busy);
    EXPECT_EQ(h.soc.sdma.queue_depth(0), 3u);
    ASSERT_EQ(h.soc.sdma.fault_events().size(), 1u);
    EXPECT_STREQ(h.soc.sdma.fault_events()[0].kind, "sdma-stall");
    h.soc.sdma.inject({});  // healthy again: the next doorbell drains the ring
    h.ring(0);
    test::run_until_idle();
    EXPECT_EQ(h.soc.sdma.channel(0).completed, 3u);
}

}  // namespace
}  // namespace pfsim

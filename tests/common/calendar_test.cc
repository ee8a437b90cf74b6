// Calendar: work queues within a bucket's capacity, reservations out of time
// order do not queue behind later ones, and a window that moves forward
// forgets what it left behind.
#include "model/common/calendar.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace pfsim {
namespace {

constexpr Tick kB = Calendar::kBucket;

TEST(Calendar, WorkQueuesOnOneServerAndRunsSideBySideOnTwo) {
    Calendar one;
    EXPECT_EQ(one.reserve(0, 1000), 1000u);
    EXPECT_EQ(one.reserve(0, 1000), 2000u);
    Calendar two(2);
    EXPECT_EQ(two.reserve(0, kB), kB);
    EXPECT_EQ(two.reserve(0, kB), kB);
    EXPECT_EQ(two.reserve(0, kB), 2 * kB);  // bucket 0 is full: the third starts in bucket 1
}

TEST(Calendar, AnEarlierReservationDoesNotWaitForALaterOne) {
    Calendar c;
    EXPECT_EQ(c.reserve(10 * kB, 1000), 10 * kB + 1000);
    EXPECT_EQ(c.reserve(0, 1000), 1000u);
}

TEST(Calendar, TheWindowForgetsTheBucketsItMovesPast) {
    Calendar c(1, 4);  // 16 buckets remembered
    EXPECT_EQ(c.reserve(0, kB), kB);  // bucket 0 full
    // Bucket 16 shares bucket 0's entry: it starts empty.
    EXPECT_EQ(c.reserve(16 * kB, 1000), 16 * kB + 1000);
    // Far ahead, then back before the window: as early as the window allows.
    EXPECT_EQ(c.reserve(100 * kB, 1000), 100 * kB + 1000);
    EXPECT_EQ(c.reserve(0, 1000), 85 * kB + 1000);
    // A full bucket inside the window is still full.
    Calendar d(1, 4);
    EXPECT_EQ(d.reserve(20 * kB, kB), 21 * kB);
    EXPECT_EQ(d.reserve(20 * kB, 1000), 21 * kB + 1000);
}

// Work that finds its buckets full starts where the first free one begins, on
// a pool as on one server: the calendar remembers which buckets are full.
TEST(Calendar, WorkAfterFullBucketsStartsAtTheFirstFreeOne) {
    Calendar pool(4);
    for (int i = 0; i < 4; ++i) pool.reserve(0, 3 * kB);  // buckets 0, 1 and 2 full
    EXPECT_EQ(pool.reserve(0, 100), 3 * kB + 100);
    EXPECT_EQ(pool.reserve(kB, 100), 3 * kB + 100);
    Calendar one;
    EXPECT_EQ(one.reserve(5 * kB, 2 * kB), 7 * kB);  // buckets 5 and 6
    EXPECT_EQ(one.reserve(0, 100), 100u);            // bucket 0 is free
    EXPECT_EQ(one.reserve(5 * kB + 10, 100), 7 * kB + 100);
}

// The same when the window has since moved onto the full buckets (a
// reservation far ahead): older work starts where the first free one begins.
TEST(Calendar, WorkAfterFullBucketsTheWindowMovedOntoStartsAtTheFirstFreeOne) {
    Calendar pool(2, 4);  // 16 buckets remembered
    pool.reserve(0, 100);  // bucket 0 not full
    pool.reserve(kB, 6 * kB);  // buckets 1 to 3 full
    EXPECT_EQ(pool.reserve(17 * kB, 100), 17 * kB + 100);  // the window is now 2 to 17
    EXPECT_EQ(pool.reserve(0, 100), 4 * kB + 100);
}

// Work that ends in a bucket others use ends when the bucket's work, spread over
// the servers, is done: for a power of two of servers (a shift) and for others.
TEST(Calendar, WorkEndsWhenItsBucketsWorkSpreadOverTheServersIsDone) {
    for (uint64_t servers : {1, 2, 3, 4, 5, 7, 64, 2047, 2048, 4096, 32768, int(Calendar::kMaxServers)}) {
        Calendar c(servers);
        const Tick before = 1000 * servers + 37;  // the bucket's earlier work
        EXPECT_EQ(c.reserve(5 * kB, before), 5 * kB + before);
        EXPECT_EQ(c.reserve(5 * kB, 100), 5 * kB + std::max<Tick>(100, (before + 100) / servers)) << servers << " servers";
    }
}

// The calendar's rule without its shortcuts, for times that stay inside the
// window: work fills its bucket's free capacity (in the first bucket only what
// is left of it after t) and spills into later ones; work arriving before the
// first bucket that is not full starts there.
class PlainCalendar {
public:
    explicit PlainCalendar(uint64_t servers) : servers_(servers) {}
    Tick reserve(Tick t, Tick work) {
        uint64_t b = t / kB;
        while (used_[first_free_] >= kB * servers_) ++first_free_;
        if (b < first_free_) {
            b = first_free_;
            t = b * kB;
        }
        Tick remaining = work, done = t + work;
        for (bool first = true; remaining > 0; first = false, ++b) {
            Tick& used = used_[b];
            Tick avail = kB * servers_ - std::min(used, kB * servers_);
            if (first) avail = std::min(avail, ((b + 1) * kB - t) * servers_);
            const Tick take = std::min(avail, remaining);
            used += take;
            remaining -= take;
            if (remaining == 0) done = std::max(done, b * kB + used / servers_);
        }
        return done;
    }

private:
    uint64_t servers_;
    std::map<uint64_t, Tick> used_;
    uint64_t first_free_ = 0;
};

// Bursts of reservations in and out of time order, partly filling buckets,
// filling them and spilling over, end when the plain rule says.
TEST(Calendar, EndsAsThePlainRuleSays) {
    for (uint64_t servers : {1, 3, 2048}) {
        std::mt19937_64 rng(servers);
        Calendar c(servers);
        PlainCalendar plain(servers);
        Tick now = 0;
        for (int i = 0; i < 20000; ++i) {
            if (rng() % 8 == 0) now += rng() % (kB / 2);  // time moves on: about 600 buckets in all
            const Tick t = now + rng() % (2 * kB) - std::min<Tick>(now, kB);
            const Tick work = 1 + rng() % (rng() % 16 == 0 ? 2 * kB : kB / 16) * servers / 8;
            ASSERT_EQ(c.reserve(t, work), plain.reserve(t, work)) << servers << " servers, reservation " << i;
        }
    }
}

// The limits of a bucket's 32-bit work count: the most servers fill a bucket
// exactly, and times up to kTimeLimit are exact.
TEST(Calendar, LimitsOfTheServersAndOfTime) {
    EXPECT_THROW(Calendar(0), std::invalid_argument);
    EXPECT_THROW(Calendar(Calendar::kMaxServers + 1), std::invalid_argument);
    Calendar most(Calendar::kMaxServers);
    for (uint64_t i = 0; i < Calendar::kMaxServers; ++i) most.reserve(0, kB);  // bucket 0 full
    EXPECT_EQ(most.reserve(0, 100), kB + 100);
    Calendar late;
    const Tick last = Calendar::kTimeLimit - kB;
    EXPECT_EQ(late.reserve(last, kB / 2), last + kB / 2);
    EXPECT_EQ(late.reserve(last, kB), last + 3 * kB / 2);  // queued behind the first: exact
    // Far before the window (4096 buckets, the last one at kTimeLimit): as early
    // as the window allows.
    EXPECT_EQ(late.reserve(0, 100), Calendar::kTimeLimit - 4095 * kB + 100);
    EXPECT_THROW(late.reserve(Calendar::kTimeLimit, 1), std::overflow_error);
}

}  // namespace
}  // namespace pfsim

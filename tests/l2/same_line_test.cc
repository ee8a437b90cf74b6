// SameLinePorts (model/l2/same_line.h): hits on one line from different
// initiators one interval apart, whatever order the simulation presents them in.
#include "model/l2/same_line.h"

#include <algorithm>
#include <random>
#include <vector>

#include <gtest/gtest.h>

namespace pfsim {
namespace {

constexpr Tick kI = 100;  // the interval

struct Hit {
    int who;
    Tick t;
};

// Serves `hits` on line 0 in the order given; the service times, sorted.
std::vector<Tick> served(const std::vector<Hit>& hits) {
    SameLinePorts ports(1, kI);
    std::vector<Tick> out;
    for (const Hit& h : hits) out.push_back(ports.serve(0, 0, h.who, h.t));
    std::sort(out.begin(), out.end());
    return out;
}

TEST(SameLine, OneInitiatorIsNeverHeldUp) {
    SameLinePorts ports(1, kI);
    for (Tick t = 0; t < 10 * kI; t += kI / 4) EXPECT_EQ(ports.serve(0, 0, 3, t), t);
}

TEST(SameLine, SecondInitiatorWaitsForTheNextSlot) {
    SameLinePorts ports(2, kI);
    EXPECT_EQ(ports.serve(0, 0, 0, 10), 10);
    EXPECT_EQ(ports.serve(0, 0, 1, 20), kI);
    EXPECT_EQ(ports.serve(0, 0, 2, 30), 2 * kI);
    EXPECT_EQ(ports.serve(1, 1, 2, 30), 30);  // another line is another port
}

TEST(SameLine, TheHolderPaysOnceAnotherInitiatorTookTheLine) {
    SameLinePorts ports(1, kI);
    EXPECT_EQ(ports.serve(0, 0, 0, 0), 0);
    EXPECT_EQ(ports.serve(0, 0, 0, kI + 5), kI + 5);  // the next slot: still held, no slot taken
    EXPECT_EQ(ports.serve(0, 0, 1, kI + 10), kI + 10);  // slot 1 is free
    EXPECT_EQ(ports.serve(0, 0, 0, kI + 20), 2 * kI);   // initiator 1 holds it now
}

// A hit made late in simulation for an early time takes the free slot at its
// own time, not the slot after hits made for later times (cores run a quantum
// apart). The old "next free time" rule served it at 11 * kI.
TEST(SameLine, AHitFromTheSimulatedPastDoesNotQueueBehindLaterOnes) {
    SameLinePorts ports(1, kI);
    EXPECT_EQ(ports.serve(0, 0, 0, 10 * kI), 10 * kI);
    EXPECT_EQ(ports.serve(0, 0, 1, 0), 0);
    EXPECT_EQ(ports.serve(0, 0, 2, 5), kI);  // but it does queue behind its own time's hits
}

// 48 initiators at once: served one slot apart, in any arrival order.
TEST(SameLine, ManyInitiatorsAtOnceAreServedOneSlotApartInAnyOrder) {
    std::vector<Hit> hits;
    for (int c = 0; c < 48; ++c) hits.push_back({c, 7});
    std::vector<Tick> expected = {7};
    for (Tick k = 1; k < 48; ++k) expected.push_back(k * kI);
    std::mt19937 rng(1);
    for (int order = 0; order < 20; ++order) {
        std::shuffle(hits.begin(), hits.end(), rng);
        EXPECT_EQ(served(hits), expected) << "order " << order;
    }
}

// Two cores streaming over the same lines: one running a quantum ahead in the
// simulation (all its hits first), behind, or the two interleaved hit by hit
// take the same slots. Within a slot, which of two hits is served at its own
// time and which waits for the next slot is first come, first served: the
// times differ by less than one interval. (The old "next free time" rule made
// the core that ran behind wait for the end of everything the other had done.)
TEST(SameLine, TheResultDoesNotDependOnHowTheCoresQuantaInterleave) {
    std::vector<Hit> a, b;
    for (Tick t = 0; t < 40 * kI; t += 3 * kI) {
        a.push_back({0, t});
        b.push_back({1, t + kI / 2});
    }
    std::vector<Hit> ahead = a, interleaved, behind = b;
    ahead.insert(ahead.end(), b.begin(), b.end());
    behind.insert(behind.end(), a.begin(), a.end());
    for (size_t i = 0; i < a.size(); ++i) interleaved.insert(interleaved.end(), {a[i], b[i]});
    auto slots = [](const std::vector<Tick>& times) {
        std::vector<Tick> s;
        for (Tick t : times) s.push_back(t / kI);
        return s;
    };
    const std::vector<Tick> reference = served(interleaved);
    for (const auto* order : {&ahead, &behind}) {
        const std::vector<Tick> times = served(*order);
        EXPECT_EQ(slots(times), slots(reference));
        for (size_t i = 0; i < times.size(); ++i) EXPECT_LT(std::max(times[i], reference[i]) - std::min(times[i], reference[i]), kI);
    }
}

TEST(SameLine, AHitOlderThanTheWindowIsServedAtItsOwnTime) {
    static_assert(SameLinePorts::kWindow == 64, "the slots below assume a 64-slot window");
    SameLinePorts ports(1, kI);
    EXPECT_EQ(ports.serve(0, 0, 0, 936 * kI), 936 * kI);
    EXPECT_EQ(ports.serve(0, 0, 1, 936 * kI), 937 * kI);
    EXPECT_EQ(ports.serve(0, 0, 2, 1000 * kI), 1000 * kI);  // the window is now slots 937..1000
    EXPECT_EQ(ports.serve(0, 0, 3, 936 * kI), 936 * kI);    // slot 936 is forgotten
    EXPECT_EQ(ports.serve(0, 0, 4, 937 * kI), 938 * kI);    // slot 937 is not
}

TEST(SameLine, AnotherLineInTheSlotFindsThePortEmpty) {
    SameLinePorts ports(1, kI);
    ports.serve(0, 7, 0, 0);
    EXPECT_EQ(ports.serve(0, 7, 1, 0), kI);  // line 7's slot 0 is taken
    EXPECT_EQ(ports.serve(0, 8, 2, 0), 0);   // line 8 replaced it: its own port
    EXPECT_EQ(ports.serve(0, 8, 3, 0), kI);
}

TEST(SameLine, ZeroIntervalIsNoLimit) {
    SameLinePorts ports(1, 0);
    EXPECT_EQ(ports.serve(0, 0, 0, 5), 5);
    EXPECT_EQ(ports.serve(0, 0, 1, 5), 5);
}

}  // namespace
}  // namespace pfsim

// TraceReader: a host thread reads ahead; the consumer must see exactly the
// trace's accesses in order, and a bad line's error only after every access
// before it, however far ahead the reading got.
#include "replay/trace.h"

#include <algorithm>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

#include "tests/support/pfsim_cli.h"

namespace pfsim {
namespace {

constexpr uint64_t kLimit = uint64_t{1} << 40;

// `count` accesses, the i-th at address i * 64 of i % 7 + 1 bytes, its op cycling R, W, P.
std::string trace_text(uint64_t count) {
    std::string text = "# generated\n";
    for (uint64_t i = 0; i < count; ++i) {
        char line[64];
        std::snprintf(line, sizeof line, "%c 0x%llx %llu\n", "RWP"[i % 3], static_cast<unsigned long long>(i * 64),
                      static_cast<unsigned long long>(i % 7 + 1));
        text += line;
        if (i % 1000 == 0) text += "\n# a comment\n";
    }
    return text;
}

bool is_access(const TraceAccess& a, uint64_t i) {
    return a.addr == i * 64 && a.bytes == i % 7 + 1 && a.op == static_cast<TraceAccess::Op>(i % 3);
}

// More chunks than are ever held ahead, the last one partial.
constexpr uint64_t kMany = TraceReader::kChunkAccesses * (TraceReader::kChunksAhead + 2) + 17;

TEST(TraceReader, HandsOutEveryAccessInOrderAcrossChunks) {
    const std::string text = trace_text(kMany);
    TraceReader reader(test::write_file("many.trace", text), kLimit, "GM");
    EXPECT_EQ(reader.file_bytes(), text.size());
    uint64_t seen = 0, handed = 0;
    for (;;) {
        const std::vector<TraceAccess>& chunk = reader.next();
        if (chunk.empty()) break;
        EXPECT_LE(chunk.size(), TraceReader::kChunkAccesses);
        for (const TraceAccess& a : chunk) {
            ASSERT_TRUE(is_access(a, seen)) << "access " << seen;
            ++seen;
        }
        EXPECT_GT(reader.bytes_handed_out(), handed);
        handed = reader.bytes_handed_out();
    }
    EXPECT_EQ(seen, kMany);
    EXPECT_EQ(reader.bytes_handed_out(), text.size());
    EXPECT_TRUE(reader.next().empty());  // and stays at the end
}

TEST(TraceReader, ABadLineComesAfterEveryAccessBeforeIt) {
    // The bad line's chunk is partial, the reader far ahead of the consumer.
    const uint64_t good = TraceReader::kChunkAccesses * 2 + 5;
    const std::string text = trace_text(good);
    const uint64_t bad_line = static_cast<uint64_t>(std::count(text.begin(), text.end(), '\n')) + 1;
    TraceReader reader(test::write_file("bad.trace", text + "R 0x0 zz\n" + trace_text(10)), kLimit, "GM");
    uint64_t seen = 0;
    try {
        for (;;) {
            const std::vector<TraceAccess>& chunk = reader.next();
            ASSERT_FALSE(chunk.empty()) << "the trace ended without its error";
            seen += chunk.size();
        }
    } catch (const TraceError& e) {
        EXPECT_NE(std::string(e.what()).find("bad.trace:" + std::to_string(bad_line) + ": expected a decimal byte count"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(seen, good);
    EXPECT_TRUE(reader.next().empty());
}

TEST(TraceReader, AnAccessOutsideTheLimitIsABadLine) {
    TraceReader reader(test::write_file("outside.trace", "R 0x0 64\nW 0xfc0 65\n"), 0x1000, "the test's range");
    EXPECT_EQ(reader.next().size(), 1u);
    try {
        reader.next();
        FAIL() << "no error";
    } catch (const TraceError& e) {
        EXPECT_NE(std::string(e.what()).find("outside.trace:2: range 0xfc0 + 65 lies outside the test's range"),
                  std::string::npos)
            << e.what();
    }
}

// The reading thread waits while kChunksAhead chunks wait: destroying the
// reader there (or before anything was taken) stops it; a hang fails the test
// by its timeout.
TEST(TraceReader, DestroyedWhileReadingAheadStops) {
    const std::string path = test::write_file("ahead.trace", trace_text(kMany));
    { TraceReader untouched(path, kLimit, "GM"); }
    TraceReader reader(path, kLimit, "GM");
    EXPECT_EQ(reader.next().size(), TraceReader::kChunkAccesses);
}

TEST(TraceReader, AFileThatCannotBeOpenedIsNamed) {
    try {
        TraceReader reader(test::tmp("no/such.trace"), kLimit, "GM");
        FAIL() << "opened";
    } catch (const TraceError& e) {
        EXPECT_NE(std::string(e.what()).find("such.trace: cannot open the trace file"), std::string::npos) << e.what();
    }
}

TEST(TraceReader, ReadTraceHoldsTheWholeTrace) {
    const std::vector<TraceAccess> all = read_trace(test::write_file("whole.trace", trace_text(kMany)), kLimit, "GM");
    ASSERT_EQ(all.size(), kMany);
    for (uint64_t i = 0; i < kMany; ++i) ASSERT_TRUE(is_access(all[i], i)) << i;
}

}  // namespace
}  // namespace pfsim

#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "model/gm/gm_timing.h"
#include "model/memory/backing_store.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

// Bandwidth (bytes/s) reached when `total` bytes are requested in transfers of
// `size` bytes, all issued at time 0 (a saturating set of requesters).
double saturated_bandwidth(const Config& cfg, uint64_t size, uint64_t total) {
    GmTiming gm(cfg);
    Tick last = 0;
    for (uint64_t addr = 0; addr < total; addr += size) {
        last = std::max(last, gm.schedule(false, addr, size, 0));
    }
    return static_cast<double>(total) * 1e12 / static_cast<double>(last);
}

// Bandwidth of one requester that issues the next transfer when the last completes.
double sequential_bandwidth(const Config& cfg, uint64_t size, uint64_t total) {
    GmTiming gm(cfg);
    Tick t = 0;
    for (uint64_t addr = 0; addr < total; addr += size) t = gm.schedule(false, addr, size, t);
    return static_cast<double>(total) * 1e12 / static_cast<double>(t);
}

TEST(GmTiming, SmallTransfersGetLessBandwidthThanLargeOnes) {
    // The preset's overhead is fitted (and small); the mechanism is checked with 0.2 ns.
    const Config cfg = test::config_with({"gm.request_overhead=0.2ns"});
    const double peak = cfg.bandwidth("gm.bandwidth");
    const uint64_t total = 64ull << 20;
    double previous = 0;
    const double at_16k = saturated_bandwidth(cfg, 16384, total);
    for (uint64_t size = 64; size <= (1u << 20); size *= 2) {
        const double bw = saturated_bandwidth(cfg, size, total);
        EXPECT_GE(bw, previous * 0.999) << size;  // never worse for larger transfers
        EXPECT_LE(bw, peak * 1.0001) << size;
        if (size <= 64) {
            EXPECT_LT(bw, 0.9 * at_16k) << size;  // the per-request overhead shows
        }
        if (size >= 16384) {
            EXPECT_GT(bw, 0.95 * peak) << size;
        }
        previous = bw;
    }
    // A larger per-request overhead widens the gap.
    EXPECT_LT(saturated_bandwidth(test::config_with({"gm.request_overhead=2ns"}), 64, total), 0.5 * peak);
    // A lone requester pays the access latency on every transfer.
    EXPECT_LT(sequential_bandwidth(cfg, 512, 1 << 20), 0.05 * peak);
    EXPECT_GT(sequential_bandwidth(cfg, 16 << 20, 64 << 20), 0.9 * peak);
}

TEST(GmTiming, BandwidthFollowsTheConfiguration) {
    const double fast = saturated_bandwidth(test::config_with({"gm.bandwidth=3.2TB/s"}), 1 << 20, 64 << 20);
    const double slow = saturated_bandwidth(test::config_with({}), 1 << 20, 64 << 20);
    EXPECT_NEAR(fast / slow, 2.0, 0.05);  // latency and overhead do not scale
}

TEST(GmTiming, TwoRequestersContendForTheChannels) {
    const Config cfg = test::config_with({});
    const uint64_t bytes = 32ull << 20;
    GmTiming alone(cfg);
    const Tick alone_done = alone.schedule(false, 0, bytes, 0);
    GmTiming shared(cfg);
    const Tick first = shared.schedule(false, 0, bytes, 0);
    const Tick second = shared.schedule(false, 1ull << 30, bytes, 0);
    EXPECT_EQ(first, alone_done);
    // The second requester waits for the channels the first holds: both together
    // take about twice as long as one alone, but no longer.
    EXPECT_GT(second, alone_done * 19 / 10);
    EXPECT_LT(second, alone_done * 21 / 10);
    // Requesters on disjoint channels do not contend.
    const Config two = test::config_with({"gm.channels=2", "gm.interleave=4KiB"});
    GmTiming split(two);
    const Tick a = split.schedule(false, 0, 4096, 0);
    const Tick b = split.schedule(false, 4096, 4096, 0);
    EXPECT_EQ(a, b);
}

TEST(GmTiming, WritesAndReadsPayTheirOwnLatency) {
    const Config cfg = test::config_with({});
    GmTiming gm(cfg);
    const Tick r = GmTiming(cfg).schedule(false, 0, 64, 0);
    const Tick w = gm.schedule(true, 0, 64, 0);
    EXPECT_EQ(r - w, cfg.time("gm.read_latency") - cfg.time("gm.write_latency"));
}

TEST(BackingStore, GrowsWithTouchedPagesOnly) {
    BackingStore store(64ull << 30);
    uint8_t buf[16] = {};
    store.read(40ull << 30, buf, sizeof buf);
    EXPECT_EQ(store.touched_pages(), 0u);
    for (uint8_t b : buf) EXPECT_EQ(b, 0);
    const uint8_t data[4] = {1, 2, 3, 4};
    store.write((60ull << 30) + BackingStore::kPageBytes - 2, data, 4);  // straddles two pages
    EXPECT_EQ(store.touched_pages(), 2u);
    uint8_t back[4];
    store.read((60ull << 30) + BackingStore::kPageBytes - 2, back, 4);
    EXPECT_EQ(std::vector<uint8_t>(back, back + 4), std::vector<uint8_t>(data, data + 4));
    EXPECT_FALSE(store.contains(64ull << 30, 1));
    EXPECT_TRUE(store.contains((64ull << 30) - 1, 1));
}

// Host pages resident in [at, at + bytes) of the store.
size_t resident_pages(const BackingStore& store, uint64_t at, uint64_t bytes) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    std::vector<unsigned char> in_core(bytes / page);
    if (mincore(store.host_base() + at, bytes, in_core.data()) != 0) return SIZE_MAX;
    size_t n = 0;
    for (unsigned char c : in_core) n += c & 1;
    return n;
}

// gm.host_pages = "small" and "auto" (the default): one byte written every
// 256 KiB makes one base page resident each, not the 2 MiB around it ("huge"
// does that where the host's transparent huge pages allow: 4 writes per 2 MiB
// back all of it). A write of whole 2 MiB regions (auto: advised huge) holds.
TEST(BackingStore, SparseWritesTakeBasePagesUnlessHugeIsAsked) {
    constexpr uint64_t kRegion = 64ull << 20, kStride = 256 << 10;
    for (BackingStore::HostPages pages : {BackingStore::HostPages::Small, BackingStore::HostPages::Auto}) {
        BackingStore store(1ull << 30, pages);
        const uint8_t one = 1;
        for (uint64_t a = 0; a < kRegion; a += kStride) store.write(a, &one, 1);
        EXPECT_EQ(resident_pages(store, 0, kRegion), kRegion / kStride);
        std::vector<uint8_t> tensor((8 << 20) + 123, 7);
        store.write(kRegion + (1 << 20), tensor.data(), tensor.size());
        std::vector<uint8_t> back(tensor.size());
        store.read(kRegion + (1 << 20), back.data(), back.size());
        EXPECT_EQ(back, tensor);
    }
}

// A store told that every writer goes through write() answers never-written
// pages with zeros and leaves their host memory alone; written bytes read back,
// also in a read that straddles a written and an unwritten page.
TEST(BackingStore, UnwrittenPagesReadAsZeroWithoutHostMemory) {
    constexpr uint64_t kRegion = 64ull << 20;
    BackingStore store(1ull << 30);
    store.read_unwritten_as_zero();
    std::vector<uint8_t> buf(1 << 20, 0xAA);
    for (uint64_t a = 0; a < kRegion; a += buf.size()) {
        store.read(a, buf.data(), buf.size());
        ASSERT_EQ(std::count(buf.begin(), buf.end(), 0), static_cast<long>(buf.size())) << a;
    }
    EXPECT_EQ(resident_pages(store, 0, kRegion), 0u);
    const uint8_t data[4] = {1, 2, 3, 4};
    store.write(3 * BackingStore::kPageBytes - 4, data, 4);  // the last bytes of page 2
    uint8_t back[8];
    std::memset(back, 0xAA, sizeof back);
    store.read(3 * BackingStore::kPageBytes - 4, back, 8);  // and the first of page 3, unwritten
    EXPECT_EQ(std::vector<uint8_t>(back, back + 8), (std::vector<uint8_t>{1, 2, 3, 4, 0, 0, 0, 0}));
}

// zero() counts its pages as a write of zeros does but leaves host pages that
// read as zeros alone; release() gives written pages back (they read as zeros
// again), the touched count unchanged. The control: a write() of the same
// zeros makes every page resident.
// (mincore counts a page mapped to the host's zero page as resident; the
// process's resident set does not.)
TEST(BackingStore, ZeroAndReleaseHoldNoHostMemory) {
    constexpr uint64_t kRegion = 16 << 20, kStride = 4096;
    auto resident_bytes = [] {
        std::ifstream statm("/proc/self/statm");
        uint64_t size = 0, resident = 0;
        statm >> size >> resident;
        return resident * static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
    };
    BackingStore store(1ull << 30, BackingStore::HostPages::Small);
    const uint64_t zeros = 0;
    uint64_t before = resident_bytes();
    for (uint64_t a = 0; a < kRegion; a += kStride) store.zero(a, sizeof zeros);
    EXPECT_LT(resident_bytes() - before, kRegion / 8);
    EXPECT_EQ(store.touched_pages(), kRegion / BackingStore::kPageBytes);
    before = resident_bytes();
    for (uint64_t a = kRegion; a < 2 * kRegion; a += kStride) store.write(a, &zeros, sizeof zeros);
    EXPECT_GT(resident_bytes() - before, kRegion / 2);
    EXPECT_EQ(resident_pages(store, kRegion, kRegion), kRegion / kStride);
    const uint64_t one = 1;
    store.write(kRegion + 64, &one, sizeof one);
    store.release(kRegion, kRegion);
    EXPECT_EQ(resident_pages(store, kRegion, kRegion), 0u);
    EXPECT_EQ(store.touched_pages(), 2 * kRegion / BackingStore::kPageBytes);
    uint64_t back = 7;
    store.read(kRegion + 64, &back, sizeof back);
    EXPECT_EQ(back, 0u);
    // zero() of bytes that are not zero writes them.
    store.write(8, &one, sizeof one);
    store.zero(8, sizeof one);
    store.read(8, &back, sizeof back);
    EXPECT_EQ(back, 0u);
}

// GM's uncached alias: its host range is the store's, so that nothing else of
// the host can be mapped where a kernel's alias pointer points; it holds no
// memory and cannot be read (the core serves loads through it, model/core).
TEST(BackingStore, KeepsTheAliasRangeAboveItForItself) {
    constexpr uint64_t kCapacity = 1ull << 30, kAlias = 1ull << 36;
    BackingStore store(kCapacity, BackingStore::HostPages::Small, kAlias);
    const uint8_t data[4] = {5, 6, 7, 8};
    store.write(kCapacity - 4, data, 4);
    uint8_t back[4] = {};
    store.read(kCapacity - 4, back, 4);
    EXPECT_EQ(std::vector<uint8_t>(back, back + 4), (std::vector<uint8_t>{5, 6, 7, 8}));
    for (const uint64_t at : {kAlias, kAlias + kCapacity - 4096}) {
        void* p = mmap(store.host_base() + at, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        EXPECT_EQ(p, MAP_FAILED) << at;  // taken: EEXIST
        if (p != MAP_FAILED) munmap(p, 4096);
    }
    EXPECT_THROW(BackingStore(kCapacity, BackingStore::HostPages::Small, kCapacity / 2), std::logic_error);
}

// A memory file's pages mapped into the store: the range's holes (an output not
// yet written) take their pages at once, pages outside it stay holes, the file
// keeps its size, its bytes read through the store and the store's writes land
// in the file. (Control: the holes allocated from the file's start rather than
// the mapping's offset left page 0 allocated and page 3 of the range a hole.)
TEST(BackingStore, MapsAMemoryFilesHolesAtOnceAndNoPageBeyond) {
    const int fd = memfd_create("gm_test", MFD_CLOEXEC);
    ASSERT_GE(fd, 0);
    constexpr uint64_t kPage = 4096;
    ASSERT_EQ(ftruncate(fd, 6 * kPage), 0);
    const std::vector<uint8_t> data(kPage, 0x5A);
    ASSERT_EQ(pwrite(fd, data.data(), kPage, 2 * kPage), static_cast<ssize_t>(kPage));  // page 2: data, the rest holes
    struct stat st {};
    auto allocated_pages = [&] {
        EXPECT_EQ(fstat(fd, &st), 0);
        return static_cast<uint64_t>(st.st_blocks) * 512 / kPage;
    };
    ASSERT_EQ(allocated_pages(), 1u);
    BackingStore store(1ull << 30);
    store.map_file(1 << 20, 3 * kPage, fd, kPage);  // pages 1 to 3 of the file
    EXPECT_EQ(allocated_pages(), 3u);               // 1 and 3 allocated, 0, 4 and 5 still holes
    EXPECT_EQ(st.st_size, static_cast<off_t>(6 * kPage));
    std::vector<uint8_t> back(3 * kPage);
    store.read(1 << 20, back.data(), back.size());
    EXPECT_EQ(std::count(back.begin(), back.begin() + kPage, 0), static_cast<long>(kPage));
    EXPECT_EQ(std::count(back.begin() + kPage, back.begin() + 2 * kPage, 0x5A), static_cast<long>(kPage));
    EXPECT_EQ(std::count(back.begin() + 2 * kPage, back.end(), 0), static_cast<long>(kPage));
    const uint8_t one = 1;
    store.write((1 << 20) + 2 * kPage + 7, &one, 1);
    uint8_t in_file = 0;
    ASSERT_EQ(pread(fd, &in_file, 1, 3 * kPage + 7), 1);
    EXPECT_EQ(in_file, 1);
    EXPECT_EQ(allocated_pages(), 3u);
    uint8_t first = 0xFF;
    ASSERT_EQ(pread(fd, &first, 1, 0), 1);  // a hole reads as zero without taking a page
    EXPECT_EQ(first, 0);
    store.unmap_file(1 << 20, 3 * kPage);
    close(fd);
}

// The preset's alias sits 8 TiB above a 64 GiB GM: a die keeps the alias range,
// not the 8 TiB between, or some 15 dies exhaust a process's address space
// (sdma_test and link_test make more).
TEST(BackingStore, ThirtyTwoDiesWithTheirAliasesFitInOneProcess) {
    std::vector<std::unique_ptr<BackingStore>> dies;
    for (int i = 0; i < 32; ++i) {
        dies.push_back(std::make_unique<BackingStore>(64ull << 30, BackingStore::HostPages::Small, 8ull << 40));
    }
    EXPECT_EQ(dies.size(), 32u);
}

class GmModule : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        harness_ = &test::make_harness(test::config_with({}));
        test::elaborate();
    }
    static test::Harness* harness_;
};
test::Harness* GmModule::harness_ = nullptr;

TEST_F(GmModule, AddressOutsideGmIsAnError) {
    const uint64_t size = 64ull << 30;
    uint8_t buf[8] = {};
    harness_->uncached_read(size - 4, buf, 8);
    EXPECT_EQ(harness_->status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    harness_->read(size, buf, 1);
    EXPECT_EQ(harness_->status(), tlm::TLM_ADDRESS_ERROR_RESPONSE);
    harness_->uncached_write(size - 8, buf, 8);
    EXPECT_EQ(harness_->status(), tlm::TLM_OK_RESPONSE);
}

}  // namespace
}  // namespace pfsim

// Large buffers and copies are split over the host's threads; the bytes are
// those of one plain pass, at any size and alignment.
#include "base/host_buffer.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace pfsim {
namespace {

std::vector<uint8_t> pattern(size_t bytes) {
    std::vector<uint8_t> v(bytes);
    uint64_t x = 88172645463325252ull;
    for (uint8_t& b : v) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        b = static_cast<uint8_t>(x);
    }
    return v;
}

TEST(HostBuffer, ALargeBufferIsAllZerosAndItsCopyIsExact) {
    for (size_t bytes : {size_t{0}, size_t{4095}, (size_t{32} << 20) - 1, (size_t{40} << 20) + 12345}) {
        const std::vector<uint8_t> zeros = host_buffer(bytes);
        ASSERT_EQ(zeros.size(), bytes);
        EXPECT_EQ(std::vector<uint8_t>(bytes, 0), zeros) << bytes;
        const std::vector<uint8_t> data = pattern(bytes);
        EXPECT_EQ(host_buffer_copy(data), data) << bytes;
    }
}

TEST(HostBuffer, AParallelCopyIsAMemcpyAtAnyOffsetAndLength) {
    const size_t bytes = (size_t{70} << 20) + 777;  // several pieces, the last one short
    const std::vector<uint8_t> src = pattern(bytes + 64);
    for (size_t offset : {size_t{0}, size_t{1}, size_t{63}}) {
        for (size_t len : {size_t{100}, (size_t{32} << 20) - 1, size_t{32} << 20, bytes - 5}) {
            std::vector<uint8_t> got(len + 2, 0xAB), want(len + 2, 0xAB);
            parallel_copy(got.data() + 1, src.data() + offset, len);
            std::memcpy(want.data() + 1, src.data() + offset, len);
            ASSERT_EQ(got, want) << offset << " " << len;  // and nothing outside [1, len + 1) written
        }
    }
}

}  // namespace
}  // namespace pfsim

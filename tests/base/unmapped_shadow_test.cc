// ASan's mend for SystemC's coroutine stacks (base/sanitizer_defaults.cc): a
// range unmapped and mapped again carries none of its old redzones. Outside
// an ASan build there is no shadow to check.
#include <gtest/gtest.h>
#include <sys/mman.h>

#include <cstddef>

#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#endif

namespace {

TEST(UnmappedShadow, AStackMappedAgainAtTheSameAddressHasNoOldRedzone) {
#if defined(__SANITIZE_ADDRESS__)
    const size_t size = 1 << 20;  // a coroutine's stack
    auto map = [&] {
        return static_cast<char*>(mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    };
    char* first = map();
    ASSERT_NE(first, MAP_FAILED);
    __asan_poison_memory_region(first + 4096, 32);  // a frame's redzone, left as a blocked thread leaves it
    ASSERT_TRUE(__asan_address_is_poisoned(first + 4096));
    ASSERT_EQ(munmap(first, size), 0);
    char* again = map();
    ASSERT_NE(again, MAP_FAILED);
    if (again != first) GTEST_SKIP() << "the kernel chose another address";
    EXPECT_FALSE(__asan_address_is_poisoned(again + 4096));
    munmap(again, size);
#else
    GTEST_SKIP() << "not an ASan build";
#endif
}

}  // namespace

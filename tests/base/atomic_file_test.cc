// Temporary names beside a file that no concurrent writer shares, and the
// atomic write that uses them.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include "base/atomic_file.h"

namespace pfsim {
namespace {

// Two names asked for by one process differ: a writer in another PID
// namespace with the same process id (a container, a sandbox) gets another
// name too, which a name made of host and process id alone would repeat.
TEST(TemporaryName, NamesTheHostAndProcessAndDiffersFromCallToCall) {
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    const std::string prefix = "/cache/x.so.tmp." + std::string(host) + "." + std::to_string(getpid()) + ".";
    std::set<std::string> names;
    for (int i = 0; i < 100; ++i) {
        const std::string name = temporary_name("/cache/x.so");
        EXPECT_EQ(name.rfind(prefix, 0), 0u) << name;
        EXPECT_EQ(name.size(), prefix.size() + 16) << name;
        names.insert(name);
    }
    EXPECT_EQ(names.size(), 100u);
}

TEST(WriteAtomically, LeavesTheContentAndNoTemporaryFile) {
    const std::string dir = std::string(std::getenv("TEST_TMPDIR") ? std::getenv("TEST_TMPDIR") : "/tmp") + "/atomic";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    write_atomically(dir + "/f", "one");
    write_atomically(dir + "/f", "two");
    std::string text;
    ASSERT_TRUE(read_whole_file(dir + "/f", &text));
    EXPECT_EQ(text, "two");
    size_t files = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir)) files += e.is_regular_file();
    EXPECT_EQ(files, 1u);
}

}  // namespace
}  // namespace pfsim

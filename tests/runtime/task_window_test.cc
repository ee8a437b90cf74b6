// TaskWindow (runtime/platform/task_window.h): records indexed by task, the oldest
// dropped; a dropped or future task's record is refused by name, not read.
#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

#include "runtime/platform/task_window.h"

namespace pfsim::rt {
namespace {

TEST(TaskWindow, HoldsTasksFromTheOldestNotDropped) {
    TaskWindow<std::string> w;
    for (int t = 0; t < 5; ++t) w.push_back("task " + std::to_string(t));
    w.pop_front();
    w.pop_front();
    EXPECT_EQ(w.first(), 2u);
    EXPECT_EQ(w.size(), 5u);
    EXPECT_EQ(w[2], "task 2");
    EXPECT_EQ(w[4], "task 4");
    EXPECT_EQ(w.front(), "task 2");
    EXPECT_FALSE(w.held(1));
    EXPECT_TRUE(w.held(3));
    EXPECT_FALSE(w.held(5));
    w.grow_to(7);
    EXPECT_EQ(w.size(), 7u);
    EXPECT_EQ(w[6], "");
    w.grow_to(3);  // never drops
    EXPECT_EQ(w.size(), 7u);
    size_t held = 0;
    for (const std::string& r : w) held += !r.empty();
    EXPECT_EQ(held, 3u);
}

TEST(TaskWindow, ADroppedOrFutureTaskIsRefused) {
    TaskWindow<int> w;
    w.push_back(10);
    w.push_back(11);
    w.pop_front();
    EXPECT_EQ(w[1], 11);
    try {
        (void)w[0];
        FAIL() << "a dropped task's record was read";
    } catch (const std::logic_error& e) {
        EXPECT_EQ(std::string(e.what()), "task 0's record is not held (tasks 1 to 2)");
    }
    EXPECT_THROW((void)w[2], std::logic_error);
}

}  // namespace
}  // namespace pfsim::rt

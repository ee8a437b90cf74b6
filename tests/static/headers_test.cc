// Verilator's headers reach only the RTL bridges, not every user of the SoC.
#include <gtest/gtest.h>

namespace pfsim::test {
extern const bool kSocHeaderReachesVerilator;
extern const bool kRtlBridgeReachesVerilator;

TEST(Headers, TheSocHeaderDoesNotIncludeVerilator) {
    EXPECT_FALSE(kSocHeaderReachesVerilator);
    EXPECT_TRUE(kRtlBridgeReachesVerilator);  // the check can see an inclusion
}
}  // namespace pfsim::test

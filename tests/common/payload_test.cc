// prepare_payload: a TLM payload's length is 32 bits. An access of 4 GiB or more
// (issue 47 items 3 and 13: it was replayed as 512 bytes, or refused as "outside
// GM") is refused here, never truncated; its callers (Replay::transport,
// SimPlatform::host_transport) split it, which //tests/robustness checks end to end.
#include <gtest/gtest.h>

#include "model/common/payload.h"

namespace {

TEST(Payload, ALengthOf4GiBOrMoreIsRefusedNotTruncated) {
    tlm::tlm_generic_payload p;
    EXPECT_THROW(pfsim::prepare_payload(p, false, 0, nullptr, (uint64_t{1} << 32) + 512), std::logic_error);
    EXPECT_THROW(pfsim::prepare_payload(p, false, 0, nullptr, uint64_t{1} << 32), std::logic_error);
    pfsim::prepare_payload(p, false, 0, nullptr, 0xffffffffu);  // the control: the largest length a payload holds
    EXPECT_EQ(p.get_data_length(), 0xffffffffu);
}

}  // namespace

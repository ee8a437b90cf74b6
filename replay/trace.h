// Replay traces: one access per line, "R|W|P <hex address> <bytes>", '#' starts
// a comment. Addresses are offsets into GM.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace pfsim {

// 16 bytes: a 10 M-access trace is held whole before the replay starts.
struct TraceAccess {
    enum Op : uint8_t { Read, Write, Prefetch };
    static constexpr uint64_t kMaxBytes = (uint64_t{1} << 56) - 1;
    uint64_t addr;
    uint64_t bytes : 56;  // at most kMaxBytes (read_trace refuses more)
    Op op : 8;
};
static_assert(sizeof(TraceAccess) == 16);

// Bad trace input; the message starts with "FILE:LINE:".
class TraceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Reads and checks the whole trace: every access must lie inside [0, limit);
// `limit_what` names that range in messages. Throws TraceError naming the file
// and line at fault.
std::vector<TraceAccess> read_trace(const std::string& path, uint64_t limit,
                                    const std::string& limit_what);

}  // namespace pfsim

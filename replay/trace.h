// Replay traces: one access per line, "R|W|P <hex address> <bytes>", '#' starts
// a comment. Addresses are offsets into GM.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <deque>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

namespace pfsim {

struct TraceAccess {
    enum Op : uint8_t { Read, Write, Prefetch };
    static constexpr uint64_t kMaxBytes = (uint64_t{1} << 56) - 1;
    uint64_t addr;
    uint64_t bytes : 56;  // at most kMaxBytes (the reader refuses more)
    Op op : 8;
};
static_assert(sizeof(TraceAccess) == 16);

// Bad trace input; the message starts with "FILE:LINE:" (or "FILE:" for a file
// that cannot be opened or read).
class TraceError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Reads a trace file (or a pipe) on a host thread of its own while its consumer
// works, in chunks of kChunkAccesses, at most kChunksAhead of them parsed and
// waiting: host memory stays the same whatever the trace's length. Every access
// must lie inside [0, limit); `limit_what` names that range in messages.
//
// next() hands the accesses out in trace order. A bad line stops the reading:
// next() hands out every access before it, then throws the TraceError naming
// the file and line (so a consumer sees the same sequence, and the same error
// at the same point, however the two threads run).
class TraceReader {
public:
    static constexpr size_t kChunkAccesses = size_t{1} << 16;
    static constexpr size_t kChunksAhead = 4;

    // Throws TraceError when the file cannot be opened.
    TraceReader(const std::string& path, uint64_t limit, std::string limit_what);
    ~TraceReader();  // stops the reading thread, wherever it is
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    // The next accesses, at least one; empty at the end of the trace (and on
    // every call after). Valid until the next call.
    const std::vector<TraceAccess>& next();

    // For progress: the file's size (0 when unknown: a pipe), and how many of
    // its bytes the accesses handed out so far were read from.
    uint64_t file_bytes() const { return file_bytes_; }
    uint64_t bytes_handed_out() const { return bytes_handed_out_; }

private:
    struct Chunk {
        std::vector<TraceAccess> accesses;
        uint64_t end_offset = 0;   // file bytes up to the end of the chunk's last line
        std::exception_ptr error;  // the reading stopped here (no accesses)
        bool last = false;         // the end of the trace (no accesses)
    };
    struct Stopped {};  // thrown inside the reading thread when the reader is destroyed

    void read();
    void publish(Chunk&& chunk);  // waits while kChunksAhead wait

    const std::string path_;
    const uint64_t limit_;
    const std::string limit_what_;
    std::FILE* file_;  // read by the reading thread only
    uint64_t file_bytes_ = 0;
    uint64_t bytes_handed_out_ = 0;
    bool ended_ = false;
    std::vector<TraceAccess> handed_;  // what next() returned last

    std::mutex mutex_;
    std::condition_variable changed_;
    std::deque<Chunk> ready_;                      // guarded by mutex_
    std::vector<std::vector<TraceAccess>> spare_;  // emptied chunks' storage, guarded by mutex_
    bool stop_ = false;                            // guarded by mutex_
    std::thread thread_;
};

// Reads and checks the whole trace into memory (TraceReader drained): for tests
// and tools on short traces.
std::vector<TraceAccess> read_trace(const std::string& path, uint64_t limit,
                                    const std::string& limit_what);

}  // namespace pfsim

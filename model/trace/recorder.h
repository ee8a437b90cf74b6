// Chrome trace-event JSON (loads in Perfetto and chrome://tracing), written as
// the simulation runs: every block reports here. Events stream to the file, so
// memory does not grow with the run; past `max_bytes` recording stops and the
// trace says so with an instant event. Timestamps are microseconds with three
// decimals (nanosecond resolution), written the same way every run.
#pragma once

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>

#include "model/common/tick.h"

namespace pfsim {

class TraceRecorder {
public:
    TraceRecorder(const std::string& path, uint64_t max_bytes);
    ~TraceRecorder();  // closes the file if close() was not called (errors then unreported)
    // Ends the document and closes the file; throws std::runtime_error naming
    // the path when any byte did not reach it (a full disk).
    void close();
    TraceRecorder(const TraceRecorder&) = delete;
    TraceRecorder& operator=(const TraceRecorder&) = delete;

    bool ok() const { return file_ != nullptr; }
    // A process (a core, the SDMA engine, the memory system); named once.
    int process(const std::string& name, int sort_index);
    // A lane in a process; named once. Returns its thread id.
    int lane(int pid, const std::string& name, int sort_index);

    // A slice [start, end) on a lane; `args` is a JSON object body ("\"bytes\":4096").
    void slice(int pid, int tid, const std::string& name, Tick start, Tick end, const std::string& args = "");
    // An async span (may overlap others), nested under category `cat`.
    void async_span(int pid, const std::string& cat, const std::string& name, uint64_t id, Tick start, Tick end,
                    const std::string& args = "");
    // A flow arrow from the slice enclosing (pid, tid, from) to the one enclosing (to).
    void flow(uint64_t id, int from_pid, int from_tid, Tick from, int to_pid, int to_tid, Tick to);
    // An instant marker on a lane (`args` as for slice).
    void instant(int pid, int tid, const std::string& name, Tick at, const std::string& args = "");
    // A counter track sample.
    void counter(int pid, const std::string& name, Tick at, const std::string& series, double value);

    uint64_t bytes() const { return bytes_; }
    bool truncated() const { return truncated_; }

private:
    void emit(const std::string& event);
    // Two events that only make sense together (a flow's ends, a span's ends):
    // both are written, or, at trace.max_bytes, neither.
    void emit_together(const std::string& first, const std::string& second);
    static std::string ts(Tick t);

    std::string path_;
    FILE* file_;
    uint64_t max_bytes_;
    uint64_t bytes_ = 0;
    bool first_ = true;
    bool truncated_ = false;
    Tick last_ = 0;
    int next_pid_ = 1;
    std::map<int, int> next_tid_;
};

}  // namespace pfsim

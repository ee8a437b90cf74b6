#include "model/trace/recorder.h"

#include <cerrno>
#include <cinttypes>
#include <cstring>
#include <stdexcept>

namespace pfsim {

namespace {
std::string quote(const std::string& s) {
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
    }
    return out + "\"";
}
}  // namespace

TraceRecorder::TraceRecorder(const std::string& path, uint64_t max_bytes)
    : path_(path), file_(std::fopen(path.c_str(), "wb")), max_bytes_(max_bytes) {
    if (!file_) throw std::runtime_error(path + ": cannot write the trace file");
    std::fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", file_);
}

TraceRecorder::~TraceRecorder() {
    try {
        close();
    } catch (const std::runtime_error&) {
    }
}

void TraceRecorder::close() {
    if (!file_) return;
    if (truncated_) {
        std::string note = "{\"ph\":\"i\",\"s\":\"g\",\"pid\":0,\"tid\":0,\"ts\":" + ts(last_) +
                           ",\"name\":\"trace truncated at " + std::to_string(max_bytes_ >> 20) + " MiB (trace.max_bytes)\"}";
        std::fprintf(file_, "%s%s", first_ ? "" : ",\n", note.c_str());
    }
    std::fputs("\n]}\n", file_);
    const bool failed = std::ferror(file_) != 0;
    const bool closed = std::fclose(file_) == 0;
    file_ = nullptr;
    if (failed || !closed) throw std::runtime_error(path_ + ": cannot write the trace file (" + std::strerror(errno) + ")");
}

std::string TraceRecorder::ts(Tick t) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%" PRIu64 ".%03" PRIu64, t / 1000000, (t / 1000) % 1000);
    return buf;
}

void TraceRecorder::emit(const std::string& event) { emit_together(event, ""); }

void TraceRecorder::emit_together(const std::string& first, const std::string& second) {
    if (truncated_) return;
    const uint64_t size = first.size() + 2 + (second.empty() ? 0 : second.size() + 2);
    if (bytes_ + size > max_bytes_) {  // both or neither: no flow or span is left open
        truncated_ = true;
        return;
    }
    std::fprintf(file_, "%s%s", first_ ? "" : ",\n", first.c_str());
    if (!second.empty()) std::fprintf(file_, ",\n%s", second.c_str());
    first_ = false;
    bytes_ += size;
}

int TraceRecorder::process(const std::string& name, int sort_index) {
    const int pid = next_pid_++;
    emit("{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":0,\"name\":\"process_name\",\"args\":{\"name\":" +
         quote(name) + "}}");
    emit("{\"ph\":\"M\",\"pid\":" + std::to_string(pid) +
         ",\"tid\":0,\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + std::to_string(sort_index) + "}}");
    return pid;
}

int TraceRecorder::lane(int pid, const std::string& name, int sort_index) {
    const int tid = ++next_tid_[pid];
    const std::string head = "{\"ph\":\"M\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid);
    emit(head + ",\"name\":\"thread_name\",\"args\":{\"name\":" + quote(name) + "}}");
    emit(head + ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(sort_index) + "}}");
    return tid;
}

void TraceRecorder::slice(int pid, int tid, const std::string& name, Tick start, Tick end, const std::string& args) {
    last_ = std::max(last_, end);
    emit("{\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) + ",\"ts\":" + ts(start) +
         ",\"dur\":" + ts(end > start ? end - start : 0) + ",\"name\":" + quote(name) + ",\"args\":{" + args + "}}");
}

void TraceRecorder::instant(int pid, int tid, const std::string& name, Tick at, const std::string& args) {
    last_ = std::max(last_, at);
    emit("{\"ph\":\"i\",\"s\":\"t\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(tid) +
         ",\"ts\":" + ts(at) + ",\"name\":" + quote(name) + ",\"args\":{" + args + "}}");
}

void TraceRecorder::async_span(int pid, const std::string& cat, const std::string& name, uint64_t id, Tick start,
                               Tick end, const std::string& args) {
    last_ = std::max(last_, end);
    const std::string head = "{\"pid\":" + std::to_string(pid) + ",\"tid\":0,\"cat\":" + quote(cat) +
                             ",\"name\":" + quote(name) + ",\"id\":\"0x" + [&] {
                                 char b[24];
                                 std::snprintf(b, sizeof b, "%" PRIx64, id);
                                 return std::string(b);
                             }() + "\"";
    emit_together(head + ",\"ph\":\"b\",\"ts\":" + ts(start) + ",\"args\":{" + args + "}}",
                  head + ",\"ph\":\"e\",\"ts\":" + ts(std::max(start, end)) + "}");
}

void TraceRecorder::flow(uint64_t id, int from_pid, int from_tid, Tick from, int to_pid, int to_tid, Tick to) {
    const std::string idtext = std::to_string(id);
    emit_together("{\"ph\":\"s\",\"cat\":\"prefetch\",\"name\":\"prefetch\",\"id\":" + idtext + ",\"pid\":" +
                      std::to_string(from_pid) + ",\"tid\":" + std::to_string(from_tid) + ",\"ts\":" + ts(from) + "}",
                  "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"prefetch\",\"name\":\"prefetch\",\"id\":" + idtext +
                      ",\"pid\":" + std::to_string(to_pid) + ",\"tid\":" + std::to_string(to_tid) + ",\"ts\":" + ts(to) + "}");
}

void TraceRecorder::counter(int pid, const std::string& name, Tick at, const std::string& series, double value) {
    char v[48];
    std::snprintf(v, sizeof v, "%.6g", value);
    emit("{\"ph\":\"C\",\"pid\":" + std::to_string(pid) + ",\"tid\":0,\"ts\":" + ts(at) + ",\"name\":" + quote(name) +
         ",\"args\":{" + quote(series) + ":" + v + "}}");
}

}  // namespace pfsim

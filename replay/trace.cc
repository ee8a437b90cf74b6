#include "replay/trace.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <utility>

#include <sys/stat.h>

#include "base/hex.h"

namespace pfsim {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// The value of digit c in `base` (10 or 16), or `base` when c is none.
template <unsigned base>
unsigned digit(char c) {
    const unsigned decimal = static_cast<unsigned>(c - '0');
    if (decimal < 10) return decimal;
    if (base == 10) return base;
    const unsigned letter = static_cast<unsigned>((c | 0x20) - 'a');  // either case
    return letter < 6 ? letter + 10 : base;
}

// Parses one unsigned number of `base` (10 or 16; "0x" may lead a hexadecimal
// one) at p, advancing p. False when there is none, it does not fit 64 bits, or
// other text follows it without a blank.
template <unsigned base>
bool number(const char*& p, uint64_t* out) {
    while (blank(*p)) ++p;
    if (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    const char* start = p;
    uint64_t v = 0;
    for (unsigned d; (d = digit<base>(*p)) < base; ++p) {
        if (__builtin_mul_overflow(v, base, &v) || __builtin_add_overflow(v, d, &v)) return false;
    }
    if (p == start) return false;
    if (!(*p == '\0' || *p == '\n' || *p == '#' || blank(*p))) return false;
    *out = v;
    return true;
}

// Calls each(text, length) for the whole lines of `file` in order, read in
// large blocks: `text` holds `length` bytes, ending just after a '\n' (or at the
// end of the file, for a last line without one), and a '\0' after them.
template <typename Each>
void for_each_lines(FILE* file, Each each) {
    std::vector<char> block(size_t{1} << 20);
    size_t held = 0;  // bytes of a line not yet ended, at the block's start
    for (;;) {
        if (held + 1 >= block.size()) block.resize(block.size() * 2);  // a line longer than the block
        const size_t n = std::fread(block.data() + held, 1, block.size() - 1 - held, file);
        const size_t end = held + n;
        if (n == 0) {
            if (held > 0) {  // a last line without '\n'
                block[held] = '\0';
                each(block.data(), held);
            }
            return;
        }
        const void* last = memrchr(block.data(), '\n', end);
        const size_t whole = last ? static_cast<size_t>(static_cast<const char*>(last) - block.data()) + 1 : 0;
        if (whole > 0) {
            const char saved = block[whole];
            block[whole] = '\0';
            each(block.data(), whole);
            block[whole] = saved;
        }
        held = end - whole;
        std::memmove(block.data(), block.data() + whole, held);
    }
}

}  // namespace

TraceReader::TraceReader(const std::string& path, uint64_t limit, std::string limit_what)
    : path_(path), limit_(limit), limit_what_(std::move(limit_what)), file_(std::fopen(path.c_str(), "rb")) {
    if (!file_) throw TraceError(path + ": cannot open the trace file");
    struct stat st {};
    if (fstat(fileno(file_), &st) == 0 && S_ISREG(st.st_mode)) file_bytes_ = static_cast<uint64_t>(st.st_size);
    thread_ = std::thread([this] { read(); });
}

TraceReader::~TraceReader() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stop_ = true;
    }
    changed_.notify_all();
    thread_.join();
    std::fclose(file_);
}

const std::vector<TraceAccess>& TraceReader::next() {
    if (ended_) return handed_;
    Chunk chunk;
    {
        std::unique_lock<std::mutex> lock(mutex_);
        spare_.push_back(std::move(handed_));
        handed_.clear();
        changed_.wait(lock, [&] { return !ready_.empty(); });
        chunk = std::move(ready_.front());
        ready_.pop_front();
    }
    changed_.notify_all();
    if (chunk.error) {
        ended_ = true;
        std::rethrow_exception(chunk.error);
    }
    ended_ = chunk.last;
    handed_ = std::move(chunk.accesses);
    bytes_handed_out_ = chunk.end_offset;
    return handed_;
}

void TraceReader::publish(Chunk&& chunk) {
    {
        std::unique_lock<std::mutex> lock(mutex_);
        changed_.wait(lock, [&] { return stop_ || ready_.size() < kChunksAhead; });
        if (stop_) throw Stopped{};
        ready_.push_back(std::move(chunk));
    }
    changed_.notify_all();
}

void TraceReader::read() {
    Chunk chunk;
    auto fresh_storage = [&] {
        std::lock_guard<std::mutex> lock(mutex_);
        if (!spare_.empty()) {
            chunk.accesses = std::move(spare_.back());
            spare_.pop_back();
        }
        chunk.accesses.clear();
        chunk.accesses.reserve(kChunkAccesses);
    };
    try {
        fresh_storage();
        uint64_t line_no = 0;
        uint64_t offset = 0;  // of the region in the file
        // One pass over each region: the parser walks the lines itself. A NUL
        // byte (which would end a line's parse early and hide what follows it)
        // stops the parse where it stands, so it is looked for only on the way
        // to an error, and in comments, which the parser skips.
        for_each_lines(file_, [&](char* text, size_t length) {
            const char* const end = text + length;
            const char* line = text;
            auto fail = [&](const std::string& why) {
                const char* stop = static_cast<const char*>(std::memchr(line, '\n', static_cast<size_t>(end - line)));
                const size_t span = static_cast<size_t>((stop ? stop : end) - line);
                const void* nul = std::memchr(line, '\0', span);
                const std::string at = path_ + ":" + std::to_string(line_no) + ": ";
                if (nul) throw TraceError(at + "a NUL byte at column " + std::to_string(static_cast<const char*>(nul) - line + 1));
                throw TraceError(at + why);
            };
            // Past the '\n' that ends a line whose text ended at p (or a comment
            // starting at p); false at a byte that ends no line.
            auto line_end = [&](const char*& p) {
                while (blank(*p)) ++p;
                if (*p == '#') {
                    const char* stop = static_cast<const char*>(std::memchr(p, '\n', static_cast<size_t>(end - p)));
                    if (std::memchr(p, '\0', static_cast<size_t>((stop ? stop : end) - p))) return false;
                    p = stop ? stop + 1 : end;
                    return true;
                }
                if (*p == '\n') {
                    ++p;
                    return true;
                }
                return p == end;
            };
            for (const char* p = text; p < end; line = p) {
                ++line_no;
                if (line_end(p)) continue;  // blank or comment
                TraceAccess a{};
                uint64_t bytes = 0;
                switch (*p) {
                    case 'R': a.op = TraceAccess::Read; break;
                    case 'W': a.op = TraceAccess::Write; break;
                    case 'P': a.op = TraceAccess::Prefetch; break;
                    default: fail(std::string("expected R, W or P, found '") + *p + "'");
                }
                ++p;
                if (!blank(*p)) fail("expected a space after the operation");
                if (!number<16>(p, &a.addr)) fail("expected a hexadecimal address");
                if (!number<10>(p, &bytes)) fail("expected a decimal byte count");
                if (!line_end(p)) fail("unexpected text after the byte count");
                if (bytes == 0) fail("byte count must be greater than zero");
                if (a.addr >= limit_ || bytes > limit_ - a.addr || bytes > TraceAccess::kMaxBytes) {
                    fail("range " + hex(a.addr) + " + " + std::to_string(bytes) + " lies outside " +
                         limit_what_ + " [0, " + hex(limit_) + ")");
                }
                a.bytes = bytes;
                chunk.accesses.push_back(a);
                if (chunk.accesses.size() == kChunkAccesses) {
                    chunk.end_offset = offset + static_cast<uint64_t>(p - text);
                    publish(std::move(chunk));
                    fresh_storage();
                }
            }
            offset += length;
        });
        if (std::ferror(file_)) throw TraceError(path_ + ": read error");
        chunk.end_offset = offset;
        if (!chunk.accesses.empty()) publish(std::move(chunk));
        Chunk last;
        last.last = true;
        last.end_offset = offset;
        publish(std::move(last));
    } catch (const Stopped&) {
    } catch (...) {
        // A bad line (or the host refusing memory): every access before it is
        // handed out first.
        const std::exception_ptr error = std::current_exception();
        try {
            if (!chunk.accesses.empty()) publish(std::move(chunk));
            Chunk failed;
            failed.error = error;
            publish(std::move(failed));
        } catch (const Stopped&) {
        }
    }
}

std::vector<TraceAccess> read_trace(const std::string& path, uint64_t limit,
                                    const std::string& limit_what) {
    TraceReader reader(path, limit, limit_what);
    std::vector<TraceAccess> out;
    for (;;) {
        const std::vector<TraceAccess>& chunk = reader.next();
        if (chunk.empty()) return out;
        out.insert(out.end(), chunk.begin(), chunk.end());
    }
}

}  // namespace pfsim

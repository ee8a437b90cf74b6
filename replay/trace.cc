#include "replay/trace.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <sstream>

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

// The lines of `file` (a last one without '\n' included), leaving it at its
// start; 0 when it cannot be read twice (a pipe).
size_t count_lines(FILE* file) {
    struct stat st {};
    if (fstat(fileno(file), &st) != 0 || !S_ISREG(st.st_mode)) return 0;
    size_t lines = 1;
    char block[1 << 16];
    size_t n = 0;
    while ((n = std::fread(block, 1, sizeof block, file)) > 0) {
        for (const char* p = block; (p = static_cast<const char*>(std::memchr(p, '\n', block + n - p))); ++p) ++lines;
    }
    std::rewind(file);
    return lines;
}

// Calls each(line, length) for every line of `file` in order, read in large
// blocks: `line` holds `length` bytes (its '\n' included, if it has one) and a
// '\0' after them, and may be written.
template <typename Each>
void for_each_line(FILE* file, Each each) {
    std::vector<char> block(size_t{1} << 20);
    size_t held = 0;  // bytes of a line not yet ended, at the block's start
    for (;;) {
        if (held + 1 >= block.size()) block.resize(block.size() * 2);  // a line longer than the block
        const size_t n = std::fread(block.data() + held, 1, block.size() - 1 - held, file);
        const size_t end = held + n;
        size_t begin = 0;
        for (char* nl; (nl = static_cast<char*>(std::memchr(block.data() + begin, '\n', end - begin)));) {
            const size_t next = static_cast<size_t>(nl - block.data()) + 1;
            const char saved = block[next];
            block[next] = '\0';
            each(block.data() + begin, next - begin);
            block[next] = saved;
            begin = next;
        }
        held = end - begin;
        std::memmove(block.data(), block.data() + begin, held);
        if (n == 0) {
            if (held > 0) {  // a last line without '\n'
                block[held] = '\0';
                each(block.data(), held);
            }
            return;
        }
    }
}

}  // namespace

std::vector<TraceAccess> read_trace(const std::string& path, uint64_t limit,
                                    const std::string& limit_what) {
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw TraceError(path + ": cannot open the trace file");
    std::vector<TraceAccess> out;
    out.reserve(count_lines(file.get()));
    uint64_t line_no = 0;
    for_each_line(file.get(), [&](char* buf, size_t length) {
        ++line_no;
        auto fail = [&](const std::string& why) {
            throw TraceError(path + ":" + std::to_string(line_no) + ": " + why);
        };
        // A NUL byte would end the parse early and hide what follows it.
        const void* nul = std::memchr(buf, '\0', static_cast<size_t>(length));
        if (nul) fail("a NUL byte at column " + std::to_string(static_cast<const char*>(nul) - buf + 1));
        const char* p = buf;
        while (blank(*p)) ++p;
        if (*p == '\0' || *p == '\n' || *p == '#') return;
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
        while (blank(*p) || *p == '\n') ++p;
        if (*p != '\0' && *p != '#') fail("unexpected text after the byte count");
        if (bytes == 0) fail("byte count must be greater than zero");
        if (a.addr >= limit || bytes > limit - a.addr || bytes > TraceAccess::kMaxBytes) {
            fail("range " + hex(a.addr) + " + " + std::to_string(bytes) + " lies outside " +
                 limit_what + " [0, " + hex(limit) + ")");
        }
        a.bytes = bytes;
        out.push_back(a);
    });
    if (std::ferror(file.get())) throw TraceError(path + ": read error");
    return out;
}

}  // namespace pfsim

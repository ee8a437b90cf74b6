#include "replay/trace.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <sstream>

#include "base/hex.h"

namespace pfsim {

namespace {

bool blank(char c) { return c == ' ' || c == '\t' || c == '\r'; }

// Parses one unsigned number of `base` at p, advancing p. False when none.
bool number(const char*& p, int base, uint64_t* out) {
    while (blank(*p)) ++p;
    if (base == 16 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) p += 2;
    if (!std::isxdigit(static_cast<unsigned char>(*p))) return false;
    char* end = nullptr;
    errno = 0;
    *out = std::strtoull(p, &end, base);
    if (errno == ERANGE || end == p) return false;
    if (!(*end == '\0' || *end == '\n' || *end == '#' || blank(*end))) return false;
    p = end;
    return true;
}

}  // namespace

std::vector<TraceAccess> read_trace(const std::string& path, uint64_t limit,
                                    const std::string& limit_what) {
    std::unique_ptr<FILE, int (*)(FILE*)> file(std::fopen(path.c_str(), "rb"), &std::fclose);
    if (!file) throw TraceError(path + ": cannot open the trace file");
    std::vector<TraceAccess> out;
    char* buf = nullptr;
    size_t cap = 0;
    uint64_t line_no = 0;
    struct Free {
        char** p;
        ~Free() { std::free(*p); }
    } release{&buf};
    ssize_t length = 0;
    while ((length = getline(&buf, &cap, file.get())) >= 0) {
        ++line_no;
        auto fail = [&](const std::string& why) {
            throw TraceError(path + ":" + std::to_string(line_no) + ": " + why);
        };
        // A NUL byte would end the parse early and hide what follows it.
        const void* nul = std::memchr(buf, '\0', static_cast<size_t>(length));
        if (nul) fail("a NUL byte at column " + std::to_string(static_cast<const char*>(nul) - buf + 1));
        const char* p = buf;
        while (blank(*p)) ++p;
        if (*p == '\0' || *p == '\n' || *p == '#') continue;
        TraceAccess a{};
        switch (*p) {
            case 'R': a.op = TraceAccess::Read; break;
            case 'W': a.op = TraceAccess::Write; break;
            case 'P': a.op = TraceAccess::Prefetch; break;
            default: fail(std::string("expected R, W or P, found '") + *p + "'");
        }
        ++p;
        if (!blank(*p)) fail("expected a space after the operation");
        if (!number(p, 16, &a.addr)) fail("expected a hexadecimal address");
        if (!number(p, 10, &a.bytes)) fail("expected a decimal byte count");
        while (blank(*p) || *p == '\n') ++p;
        if (*p != '\0' && *p != '#') fail("unexpected text after the byte count");
        if (a.bytes == 0) fail("byte count must be greater than zero");
        if (a.addr >= limit || a.bytes > limit - a.addr) {
            fail("range " + hex(a.addr) + " + " + std::to_string(a.bytes) + " lies outside " +
                 limit_what + " [0, " + hex(limit) + ")");
        }
        out.push_back(a);
    }
    if (std::ferror(file.get())) throw TraceError(path + ": read error");
    return out;
}

}  // namespace pfsim

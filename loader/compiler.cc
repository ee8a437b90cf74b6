#include "loader/compiler.h"

#include "base/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include "base/sha256.h"
#include "base/user_code.h"
#include "loader/embedded_files.h"
#include "pfsim_kernel_abi.h"

extern char** environ;

namespace pfsim {

namespace fs = std::filesystem;

namespace {

std::map<std::string, std::vector<EmbeddedFile>>& trees() {
    static std::map<std::string, std::vector<EmbeddedFile>> t;
    return t;
}

std::string sha256_of(const std::string& s) {
    return sha256_hex(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

bool read_file(const std::string& path, std::string* out) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return false;
    std::ostringstream ss;
    ss << in.rdbuf();
    *out = ss.str();
    return !in.bad();
}

// A file's size and modification time (ns), or false when it cannot be read.
bool file_stamp(const std::string& path, uint64_t* size, int64_t* mtime_ns) {
    struct stat st {};
    if (stat(path.c_str(), &st) != 0) return false;
    *size = static_cast<uint64_t>(st.st_size);
    *mtime_ns = static_cast<int64_t>(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
    return true;
}

// A header as a build's manifest records it, one line "HASH SIZE MTIME_NS
// PATH": the hash of its bytes, and its size and modification time taken
// before they were hashed.
struct Dependency {
    std::string hash, path;
    uint64_t size = 0;
    int64_t mtime_ns = 0;

    std::string line() const {
        return hash + " " + std::to_string(size) + " " + std::to_string(mtime_ns) + " " + path + "\n";
    }
    // What names the build's object: the hashes and paths.
    std::string name() const { return hash + " " + path + "\n"; }
};

bool hash_dependency(const std::string& path, Dependency* d) {
    std::string content;
    d->path = path;
    if (!file_stamp(path, &d->size, &d->mtime_ns) || !read_file(path, &content)) return false;
    d->hash = sha256_of(content);
    return true;
}

bool parse_dependency(const std::string& line, Dependency* d) {
    std::istringstream fields(line);
    return fields >> d->hash >> d->size >> d->mtime_ns && std::getline(fields >> std::ws, d->path) && !d->path.empty();
}

// Whether the header still has the bytes it had. Its size and modification
// time vouch for them when that time is older than `trusted_before` (two
// seconds before the manifest was written: a file changed within the time
// stamps' granularity of being hashed is not vouched for); else it is hashed.
bool unchanged(const Dependency& d, int64_t trusted_before) {
    Dependency now;
    if (!file_stamp(d.path, &now.size, &now.mtime_ns)) return false;
    if (now.size == d.size && now.mtime_ns == d.mtime_ns && d.mtime_ns < trusted_before) return true;
    return hash_dependency(d.path, &now) && now.hash == d.hash;
}

// How many builds of one key (one source and flags with different headers)
// its manifest remembers.
constexpr size_t kBuildsPerKey = 32;

// How many kernels that could take the precompiled prelude a cache compiles
// from their text before it builds the prelude.
constexpr long kPreludeAfterKernels = 3;

// A build under way, for the signal handler: its temporary files' common prefix
// and the compiler it waits for.
char g_build_tmp[4096];
volatile pid_t g_build_child = 0;
constexpr int kInterrupts[] = {SIGINT, SIGTERM, SIGHUP};
struct sigaction g_kept[3];

// While it lives, SIGINT, SIGTERM and SIGHUP first stop the compiler and remove
// the build's temporary files (`tmp`.o, .d, .so, .cc), then take effect as before.
class CleanUpOnInterrupt {
public:
    explicit CleanUpOnInterrupt(const std::string& tmp) {
        std::snprintf(g_build_tmp, sizeof g_build_tmp, "%s", tmp.c_str());
        struct sigaction sa {};
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        for (int i = 0; i < 3; ++i) sigaction(kInterrupts[i], &sa, &g_kept[i]);
    }
    ~CleanUpOnInterrupt() {
        for (int i = 0; i < 3; ++i) sigaction(kInterrupts[i], &g_kept[i], nullptr);
        g_build_tmp[0] = '\0';
    }

private:
    static void on_signal(int sig) {
        if (g_build_child > 0) {
            kill(g_build_child, SIGKILL);
            waitpid(g_build_child, nullptr, 0);
        }
        char path[sizeof g_build_tmp + 8];
        for (const char* suffix : {".o", ".d", ".so", ".cc"}) {
            const size_t n = strlen(g_build_tmp);
            if (n + strlen(suffix) + 1 > sizeof path) break;
            memcpy(path, g_build_tmp, n);
            memcpy(path + n, suffix, strlen(suffix) + 1);
            unlink(path);
        }
        for (int i = 0; i < 3; ++i) sigaction(kInterrupts[i], &g_kept[i], nullptr);
        raise(sig);
    }
};

// Runs argv, returns its exit status; stdout and stderr go to `output`, through
// a pipe: nothing is left on disk, and a full disk is told by the tool itself.
int run(const std::vector<std::string>& argv, std::string* output) {
    int fds[2];
    if (pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("cannot make a pipe: ") + std::strerror(errno));
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDERR_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, argv[0].c_str(), &actions, nullptr, args.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    if (rc == 0) g_build_child = pid;
    close(fds[1]);
    output->clear();
    char buf[4096];
    for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
        if (n > 0) {
            output->append(buf, static_cast<size_t>(n));
        } else if (errno != EINTR) {
            break;
        }
    }
    close(fds[0]);
    int status = 0;
    if (rc == 0) {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        g_build_child = 0;
    }
    if (rc != 0) throw std::runtime_error("cannot run the compiler '" + argv[0] + "': " + std::strerror(rc));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

// While it lives, an exclusive lock on the file `path` (made if missing), held
// once another process's lock on it is released. Without the file (a read-only
// cache) it holds nothing.
class FileLock {
public:
    explicit FileLock(const std::string& path) : fd_(open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644)) {
        while (fd_ >= 0 && flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
        }
    }
    ~FileLock() {
        if (fd_ >= 0) close(fd_);
    }
    FileLock(const FileLock&) = delete;
    FileLock& operator=(const FileLock&) = delete;

private:
    const int fd_;
};

// A cached object's sum, OBJECT.sum: "SIZE MTIME_NS SHA256" of the object as
// written. The object at `path` gets the sum of `built` (the same file before
// its rename).
void record_sum(const std::string& built, const std::string& path) {
    Dependency d;
    if (!hash_dependency(built, &d)) throw std::runtime_error("cannot read the object just built: " + built);
    write_atomically(path + ".sum", std::to_string(d.size) + " " + std::to_string(d.mtime_ns) + " " + d.hash + "\n");
}

// Whether the cached object at `path` is what was written: its size, and its
// hash unless its modification time is still the one recorded. A truncated or
// overwritten object (or one without a sum) is built again.
bool intact(const std::string& path) {
    std::string sum;
    Dependency recorded, now;
    if (!read_file(path + ".sum", &sum)) return false;
    std::istringstream fields(sum);
    if (!(fields >> recorded.size >> recorded.mtime_ns >> recorded.hash)) return false;
    if (!file_stamp(path, &now.size, &now.mtime_ns) || now.size != recorded.size) return false;
    if (now.mtime_ns == recorded.mtime_ns) return true;
    return hash_dependency(path, &now) && now.hash == recorded.hash;
}

// The prerequisites of a make rule as `gcc -MD` writes it.
std::vector<std::string> dependencies(const std::string& depfile) {
    std::string text;
    if (!read_file(depfile, &text)) return {};
    std::vector<std::string> deps;
    std::string word;
    bool after_colon = false;
    for (size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (c == '\\' && i + 1 < text.size() && (text[i + 1] == '\n' || text[i + 1] == ' ')) {
            if (text[i + 1] == ' ') word += ' ';
            ++i;
            continue;
        }
        if (c == ' ' || c == '\n' || c == '\t') {
            if (!word.empty() && after_colon) deps.push_back(word);
            word.clear();
            continue;
        }
        if (c == ':' && !after_colon && (i + 1 == text.size() || text[i + 1] == ' ' || text[i + 1] == '\n')) {
            after_colon = true;
            word.clear();
            continue;
        }
        word += c;
    }
    if (!word.empty() && after_colon) deps.push_back(word);
    return deps;
}

// `text` (a path, or a flag naming one) with the first of `roots` it names (the
// folder or a path under it) written as that root's placeholder.
std::string portable(const std::string& text, const std::vector<std::string>& roots) {
    for (size_t i = 0; i < roots.size(); ++i) {
        const std::string& root = roots[i];
        for (size_t at = text.find(root); at != std::string::npos; at = text.find(root, at + 1)) {
            const size_t end = at + root.size();
            if (end == text.size() || text[end] == '/') {
                return text.substr(0, at) + kSourceRootPlaceholder + "/" + std::to_string(i) + text.substr(end);
            }
        }
    }
    return text;
}

std::string default_cache_dir() {
    if (const char* d = std::getenv("PFSIM_CACHE_DIR"); d && *d) return d;
    if (const char* d = std::getenv("XDG_CACHE_HOME"); d && *d) return std::string(d) + "/pfsim";
    if (const char* d = std::getenv("HOME"); d && *d) return std::string(d) + "/.cache/pfsim";
    return "/tmp/pfsim-cache-" + std::to_string(getuid());
}

}  // namespace

int run_tool(const std::vector<std::string>& argv, std::string* output) { return run(argv, output); }

const char kSourceRootPlaceholder[] = "/pfsim-source-root";

namespace {

// NAME of a line `#include "NAME"`, else "".
std::string quoted_include(const std::string& line) {
    size_t i = line.find_first_not_of(" \t");
    if (i == std::string::npos || line[i] != '#') return "";
    i = line.find_first_not_of(" \t", i + 1);
    if (i == std::string::npos || line.compare(i, 7, "include") != 0) return "";
    i = line.find_first_not_of(" \t", i + 7);
    if (i == std::string::npos || line[i] != '"') return "";
    const size_t end = line.find('"', i + 1);
    return end == std::string::npos ? "" : line.substr(i + 1, end - i - 1);
}

// Adds the folders of the headers `file` reaches by quoted includes
// ("../shape.h"), each looked for beside its includer, then in the include
// folders, as the compiler does; through those headers too.
void add_quoted_include_folders(const fs::path& file, const std::vector<std::string>& include_dirs,
                                std::vector<std::string>& folders, std::set<fs::path>& seen) {
    std::string text;
    if (!seen.insert(file).second || !read_file(file.string(), &text)) return;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        const std::string name = quoted_include(line);
        if (name.empty()) continue;
        std::vector<fs::path> places = {file.parent_path()};
        for (const std::string& d : include_dirs) places.emplace_back(d);
        for (const fs::path& place : places) {
            const fs::path header = (place / name).lexically_normal();
            std::error_code ec;
            if (!fs::is_regular_file(header, ec)) continue;
            const std::string folder = header.parent_path().string();
            if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
            add_quoted_include_folders(header, include_dirs, folders, seen);
            break;
        }
    }
}

// `dir` as an absolute path without a trailing '/'.
std::string folder_path(const std::string& dir) {
    std::string f = fs::absolute(dir).lexically_normal().string();
    while (f.size() > 1 && f.back() == '/') f.pop_back();
    return f;
}

// Each include folder once (GCC searches a folder named twice once), spelled
// one way: `-Ia/`, `-Ia` and `-Ia -Ia` are one build, not three.
std::vector<std::string> distinct_folders(const std::vector<std::string>& dirs) {
    std::vector<std::string> folders;
    for (const std::string& d : dirs) {
        const std::string f = folder_path(d);
        if (std::find(folders.begin(), folders.end(), f) == folders.end()) folders.push_back(f);
    }
    return folders;
}

}  // namespace

std::vector<std::string> source_roots(const std::string& source, const std::vector<std::string>& include_dirs) {
    const fs::path abs = fs::absolute(source).lexically_normal();
    std::vector<std::string> folders = {abs.parent_path().string()};
    for (const std::string& d : include_dirs) folders.push_back(folder_path(d));
    std::set<fs::path> seen;
    add_quoted_include_folders(abs, std::vector<std::string>(folders.begin() + 1, folders.end()), folders, seen);
    auto holds = [](const std::string& outer, const std::string& inner) {  // a strict ancestor
        return inner.size() > outer.size() && inner.compare(0, outer.size(), outer) == 0 && inner[outer.size()] == '/';
    };
    std::vector<std::string> roots;
    for (size_t i = 0; i < folders.size(); ++i) {
        bool outermost = folders[i] != "/";
        for (size_t j = 0; j < folders.size() && outermost; ++j) {
            if (folders[j] != "/" && (holds(folders[j], folders[i]) || (j < i && folders[j] == folders[i]))) outermost = false;
        }
        if (outermost) roots.push_back(folders[i]);
    }
    return roots;
}

std::string restore_source_root(const std::string& path, const std::vector<std::string>& roots) {
    const std::string placeholder = kSourceRootPlaceholder;
    if (path.rfind(placeholder + "/", 0) != 0) return path;
    size_t end = placeholder.size() + 1;
    size_t i = 0;
    for (; end < path.size() && std::isdigit(static_cast<unsigned char>(path[end])); ++end) i = i * 10 + (path[end] - '0');
    if (end == placeholder.size() + 1 || i >= roots.size() || (end < path.size() && path[end] != '/')) return path;
    return roots[i] + path.substr(end);
}

std::string with_block_local_per_core(const std::string& text, const std::string& source, const std::string& abs) {
    if (text.find("[[block_local]]") == std::string::npos) return "";
    static const std::regex declaration(R"(^(\s*)\[\[block_local\]\]\s+static\s+([A-Za-z_][\w:<>, ]*?)\s+([A-Za-z_]\w*)\s*;\s*(//.*)?$)");
    std::ostringstream out;
    out << "namespace pfsim { unsigned int block_local_index(); }\n#line 1 \"" << abs << "\"\n";
    std::istringstream lines(text);
    std::string line;
    for (int n = 1; std::getline(lines, line); ++n) {
        std::smatch m;
        const size_t at = line.find("[[block_local]]"), comment = line.find("//");
        if (at == std::string::npos || comment < at) {  // none, or in a comment
            out << line << '\n';
        } else if (std::regex_match(line, m, declaration)) {
            const std::string name = m[3], copies = "pfsim_block_local_" + name;
            out << m[1] << "static " << m[2] << ' ' << copies << '[' << kBlockLocalCores << "];\n#define " << name
                << ' ' << copies << "[pfsim::block_local_index()]\n#line " << n + 1 << '\n';
        } else {
            throw CompileError(source + ":" + std::to_string(n) +
                               ": [[block_local]] is modelled for `[[block_local]] static TYPE NAME;` only");
        }
    }
    return out.str();
}

RegisterEmbeddedFiles::RegisterEmbeddedFiles(const char* tree, const EmbeddedFile* files, size_t count) {
    std::vector<EmbeddedFile>& t = trees()[tree];
    t.insert(t.end(), files, files + count);
    std::sort(t.begin(), t.end(), [](const EmbeddedFile& a, const EmbeddedFile& b) {
        return std::strcmp(a.path, b.path) < 0;
    });
}

const std::vector<EmbeddedFile>& embedded_files(const std::string& tree) {
    static const std::vector<EmbeddedFile> none;
    auto it = trees().find(tree);
    return it == trees().end() ? none : it->second;
}

std::string unpack_embedded(const std::string& root, const std::string& tree, const std::vector<EmbeddedFile>& extra) {
    std::error_code made;
    fs::create_directories(root, made);
    if (!fs::is_directory(root)) {
        throw std::runtime_error("the compile cache '" + root + "' is not a folder (PFSIM_CACHE_DIR names it)");
    }
    std::vector<EmbeddedFile> files = embedded_files(tree);
    files.insert(files.end(), extra.begin(), extra.end());
    std::string digest;
    for (const EmbeddedFile& f : files) digest += std::string(f.path) + '\0' + std::string(f.content, f.size) + '\0';
    const std::string dir = root + "/" + tree + "-" + sha256_of(digest).substr(0, 16);
    if (fs::exists(dir + "/.complete")) {
        // Unpacked before: a file damaged since (truncated, removed) is written again, whole.
        for (const EmbeddedFile& f : files) {
            const fs::path p = fs::path(dir) / f.path;
            std::error_code ec;
            if (fs::file_size(p, ec) == f.size && !ec) continue;
            std::string content;
            if (read_file(p.string(), &content) && content == std::string(f.content, f.size)) continue;
            fs::create_directories(p.parent_path(), ec);
            write_atomically(p.string(), std::string(f.content, f.size));
        }
        return dir;
    }
    // Unpack beside it, then rename: a reader never sees half a tree.
    const std::string tmp = temporary_name(dir);
    fs::remove_all(tmp);
    for (const EmbeddedFile& f : files) {
        const fs::path p = fs::path(tmp) / f.path;
        fs::create_directories(p.parent_path());
        std::ofstream out(p, std::ios::binary);
        out.write(f.content, static_cast<std::streamsize>(f.size));
        if (!out.flush()) throw std::runtime_error("cannot write '" + p.string() + "'");
    }
    std::ofstream(fs::path(tmp) / ".complete") << "ok\n";
    std::error_code ec;
    fs::rename(tmp, dir, ec);
    if (ec) fs::remove_all(tmp);  // another process unpacked it first
    if (!fs::exists(dir + "/.complete")) throw std::runtime_error("cannot unpack the " + tree + " files into " + dir);
    return dir;
}

bool takes_precompiled_prelude(const std::string& text) {
    static const std::regex standard_include(R"(#\s*include\s*<([a-z_]+|(assert|errno|float|limits|math|stdarg|stddef|stdint|stdio|stdlib|string)\.h)>)");
    static const std::regex pto_include(R"(#\s*include\s*<pto/pto-inst\.hpp>)");
    static const std::regex pragma_once(R"(#\s*pragma\s+once)");
    // `#ifndef M` of a macro every kernel's command line defines: the block up
    // to its #endif is skipped (simpler's kernels guard __gm__ and __aicore__ so).
    static const std::regex dead_block(R"(#\s*ifndef\s+(__gm__|__aicore__|AICORE|__CPU_SIM|__PFSIM__))");
    static const std::regex opens(R"(#\s*if.*)"), closes(R"(#\s*endif.*)"), branches(R"(#\s*(else|elif).*)");
    int skipping = 0;  // depth inside a skipped block
    bool in_comment = false;
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        std::string code;  // the line without its comments
        for (size_t i = 0; i < line.size(); ++i) {
            if (in_comment) {
                if (line.compare(i, 2, "*/") == 0) in_comment = false, ++i;
            } else if (line.compare(i, 2, "/*") == 0) {
                in_comment = true, ++i;
            } else if (line.compare(i, 2, "//") == 0) {
                break;
            } else {
                code += line[i];
            }
        }
        const size_t begin = code.find_first_not_of(" \t\r");
        if (begin == std::string::npos) continue;
        const size_t end = code.find_last_not_of(" \t\r");
        code = code.substr(begin, end - begin + 1);
        if (skipping) {
            if (std::regex_match(code, opens)) ++skipping;
            if (std::regex_match(code, closes)) --skipping;
            if (skipping == 1 && std::regex_match(code, branches)) return false;  // a branch that is taken
            continue;
        }
        if (std::regex_match(code, dead_block)) {
            skipping = 1;
            continue;
        }
        if (std::regex_match(code, pto_include)) return true;
        if (!std::regex_match(code, standard_include) && !std::regex_match(code, pragma_once)) return false;
    }
    return false;
}

const char* build_kind_name(BuildKind kind) {
    switch (kind) {
        case BuildKind::Aiv: return "aiv";
        case BuildKind::Aic: return "aic";
        case BuildKind::Orchestration: return "orchestration";
    }
    return "?";
}

KernelCompiler::KernelCompiler(std::string cache_dir)
    : cache_dir_(cache_dir.empty() ? default_cache_dir() : std::move(cache_dir)) {
    const char* cxx = std::getenv("PFSIM_CXX");
    cxx_ = cxx && *cxx ? cxx : "g++";
}

const std::string& KernelCompiler::include_dir() {
    if (include_dir_.empty()) {
        std::error_code ec;
        fs::create_directories(cache_dir_, ec);
        if (ec) throw std::runtime_error("cannot create the compile cache '" + cache_dir_ + "': " + ec.message());
        include_dir_ = unpack_embedded(cache_dir_, "include");
    }
    return include_dir_;
}

std::string KernelCompiler::compiler_identity() {
    if (compiler_id_.empty()) {
        std::string out;
        if (run({cxx_, "--version"}, &out) != 0) throw std::runtime_error("the compiler '" + cxx_ + "' does not run");
        compiler_id_ = cxx_ + "\n" + out;
    }
    return compiler_id_;
}

std::vector<std::string> KernelCompiler::command(BuildKind kind, const std::vector<std::string>& include_dirs) {
    // See docs/kernels.md ("How sources are compiled") for why each flag is there.
    std::vector<std::string> cmd = {cxx_, "-fPIC", "-O2", "-g", "-fno-optimize-sibling-calls", "-fno-gnu-unique",
                                    "-D__PFSIM__=1"};
    // half's conversions by instruction where the host has them (the same bits: pto/pfsim_elements.hpp).
    // (-mf16c implies AVX: TMATMUL's eight-float vectors are a register each.)
    if (__builtin_cpu_supports("f16c")) cmd.push_back("-mf16c");
    // Never a fused multiply-add (it rounds once where the cube's sum rounds twice).
    cmd.push_back("-ffp-contract=off");
    if (kind == BuildKind::Orchestration) {
        cmd.insert(cmd.end(), {"-std=c++17"});
    } else {
        cmd.insert(cmd.end(), {"-std=c++23", "-fpermissive", "-Wno-attributes",
                               kind == BuildKind::Aiv ? "-D__DAV_VEC__=1" : "-D__DAV_CUBE__=1",
                               // A kernel's simulator branch, as simpler's a2a3sim builds it (docs/cases.md).
                               "-D__CPU_SIM=1", "-D__aicore__=",
                               "-D__gm__=", "-DAICORE=",
                               // A call before every load and store: GM accesses reach the core model.
                               // (ThreadSanitizer's instrumentation, not AddressSanitizer's: the latter
                               // drops a store's check after a load of the same address.)
                               "-fsanitize=thread", "--param=tsan-instrument-func-entry-exit=0",
                               "--param=tsan-distinguish-volatile=0"});
    }
    cmd.push_back("-I" + include_dir());
    for (const std::string& d : include_dirs) cmd.push_back("-I" + d);
    return cmd;
}

std::vector<std::string> KernelCompiler::prelude_flags(const std::vector<std::string>& cmd) {
    std::string key_text = compiler_identity() + '\0';
    for (const std::string& a : cmd) key_text += a + '\0';
    const std::string dir = cache_dir_ + "/prelude/" + sha256_of(key_text).substr(0, 24);
    const std::string header = dir + "/pto_prelude.hpp";
    const std::vector<std::string> flags = {"-include", header};
    if (intact(header + ".gch")) return flags;
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return {};
    // Building it costs about three compiles: it pays from the fourth kernel a
    // cache compiles (a line each in `wanted`), not in a cache used once.
    std::ofstream(dir + "/wanted", std::ios::app) << "kernel\n";
    std::string wanted;
    if (!read_file(dir + "/wanted", &wanted) || std::count(wanted.begin(), wanted.end(), '\n') <= kPreludeAfterKernels) {
        return {};
    }
    write_atomically(header, "#include <pto/pto-inst.hpp>\n");
    const std::string tmp = temporary_name(dir + "/build");
    const CleanUpOnInterrupt clean_up(tmp);
    std::vector<std::string> argv = cmd;
    argv.insert(argv.end(), {"-x", "c++-header", header, "-o", tmp + ".o"});
    std::string output;
    if (run(argv, &output) != 0) {  // the kernel's own compile says why
        fs::remove(tmp + ".o", ec);
        return {};
    }
    record_sum(tmp + ".o", header + ".gch");
    fs::rename(tmp + ".o", header + ".gch");
    return flags;
}

std::string KernelCompiler::compile(const std::string& source, BuildKind kind,
                                    const std::vector<std::string>& given_include_dirs) {
    std::string text;
    if (!fs::is_regular_file(source) || !read_file(source, &text)) {
        throw CompileError(source + ": cannot read the source file");
    }
    const std::string abs = fs::absolute(source).lexically_normal().string();
    const std::string rewritten = with_block_local_per_core(text, source, abs);
    const std::vector<std::string> include_dirs = distinct_folders(given_include_dirs);
    std::vector<std::string> cmd = command(kind, include_dirs);
    if (!rewritten.empty()) cmd.push_back("-iquote" + fs::path(abs).parent_path().string());
    // Paths under the source's roots enter the key, the manifest and the object
    // as placeholders (the object through -ffile-prefix-map): a copy of the
    // same sources in other folders (another sandbox, another temporary
    // folder) is the same build.
    const std::vector<std::string> roots = source_roots(abs, include_dirs);
    std::string key_text = compiler_identity() + '\0' + portable(abs, roots) + '\0' + sha256_of(text) + '\0';
    for (const std::string& a : cmd) key_text += portable(a, roots) + '\0';
    for (size_t i = 0; i < roots.size(); ++i) {  // no root lies in another: one map at most matches a path
        cmd.push_back("-ffile-prefix-map=" + roots[i] + "/=" + kSourceRootPlaceholder + "/" + std::to_string(i) + "/");
    }
    for (const std::string& a : user_code::kLinkFlags) key_text += a + '\0';
    const std::string key = sha256_of(key_text);
    const std::string obj_dir = cache_dir_ + "/obj";
    std::error_code ec;
    fs::create_directories(obj_dir, ec);
    if (ec) throw std::runtime_error("cannot create the compile cache '" + obj_dir + "': " + ec.message());
    // One build of a key at a time: processes that want it at once (a run's
    // dies or ranks, tests side by side) wait for the first one's object.
    const FileLock one_build(obj_dir + "/" + key + ".lock");

    // The manifest of this key lists its last builds (newest first), each as a
    // line "build WRITTEN_NS" and every header it included with its hash (and its
    // stamp, which spares reading an unchanged header); an object is named by the
    // key and its headers' hashes and paths together. One source built with
    // different headers (another include folder, a generated header) keeps each.
    const std::string manifest_path = obj_dir + "/" + key + ".deps";
    std::vector<std::string> builds;  // the manifest's entries, as written
    std::string manifest;
    uint64_t manifest_size = 0;
    int64_t manifest_mtime = 0;
    if (file_stamp(manifest_path, &manifest_size, &manifest_mtime) && read_file(manifest_path, &manifest)) {
        std::istringstream lines(manifest);
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("build ", 0) == 0 || builds.empty()) builds.emplace_back();
            builds.back() += line + "\n";
        }
    }
    for (const std::string& build : builds) {
        std::istringstream lines(build);
        std::string names, line;
        int64_t written = manifest_mtime;  // a manifest of one build without the line: the file's time
        bool current = true;
        while (current && std::getline(lines, line)) {
            if (line.rfind("build ", 0) == 0) {
                written = std::strtoll(line.c_str() + 6, nullptr, 10);
                continue;
            }
            Dependency d;
            current = parse_dependency(line, &d);
            names += d.name();
            d.path = restore_source_root(d.path, roots);
            current = current && unchanged(d, written - 2000000000);
        }
        const std::string so = obj_dir + "/" + sha256_of(key + names) + ".so";
        if (current && intact(so)) {
            ++cached_;
            return so;
        }
    }

    // Compile, then link without the instrumentation's runtime library (pfsim
    // provides the hooks).
    std::vector<std::string> argv = cmd;
    if (kind != BuildKind::Orchestration && takes_precompiled_prelude(text)) {
        // Not part of the key: the prelude changes how fast, not what, is built.
        // Built without the kernel's include folders, which come after pfsim's
        // include set and so cannot change what PTO-ISA's headers include.
        // Before this build's clean-up guard: the prelude's build has its own,
        // and the guards do not nest.
        const std::vector<std::string> prelude = prelude_flags(command(kind));
        argv.insert(argv.end(), prelude.begin(), prelude.end());
    }
    const std::string tmp = temporary_name(obj_dir + "/" + key);
    const CleanUpOnInterrupt clean_up(tmp);
    std::string compiled = abs;
    if (!rewritten.empty()) {  // compiled from a copy; #line keeps the file and lines the user's
        compiled = tmp + ".cc";
        std::ofstream(compiled) << rewritten;
    }
    argv.insert(argv.end(), {"-c", "-MD", "-MF", tmp + ".d", "-o", tmp + ".o", compiled});
    std::string output;
    int status = run(argv, &output);
    if (status == 0) {
        std::vector<std::string> link = {cxx_, "-shared", "-o", tmp + ".so", tmp + ".o"};
        link.insert(link.end(), user_code::kLinkFlags.begin(), user_code::kLinkFlags.end());  // exit, fork: guarded
        status = run(link, &output);
    }
    fs::remove(tmp + ".o", ec);
    if (!rewritten.empty()) fs::remove(compiled, ec);
    ++compiled_;
    if (status != 0) {
        fs::remove(tmp + ".d", ec);
        fs::remove(tmp + ".so", ec);
        throw CompileError(output.empty() ? source + ": the compiler failed with status " + std::to_string(status)
                                          : output);
    }
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    manifest = "build " + std::to_string(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()) + "\n";
    std::string names;
    for (const std::string& dep : dependencies(tmp + ".d")) {
        Dependency d;
        if (dep == abs || dep == compiled || !hash_dependency(dep, &d)) continue;
        d.path = portable(fs::path(dep).lexically_normal().string(), roots);
        manifest += d.line();
        names += d.name();
    }
    fs::remove(tmp + ".d", ec);
    const std::string so = obj_dir + "/" + sha256_of(key + names) + ".so";
    record_sum(tmp + ".so", so);
    fs::rename(tmp + ".so", so);
    for (size_t i = 0; i < builds.size() && i + 1 < kBuildsPerKey; ++i) {
        if (builds[i].find('\n') != std::string::npos && builds[i].substr(builds[i].find('\n')) != manifest.substr(manifest.find('\n'))) {
            manifest += builds[i];
        }
    }
    write_atomically(manifest_path, manifest);
    return so;
}

}  // namespace pfsim

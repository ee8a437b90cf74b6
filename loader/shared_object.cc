#include "loader/shared_object.h"

#include <elf.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <fstream>
#include <iterator>

#include <dlfcn.h>
#include <link.h>

#include "base/atomic_file.h"
#include "base/sha256.h"
#include "base/user_code.h"
#include "loader/compiler.h"
#include "pfsim_kernel_abi.h"

namespace pfsim {

namespace fs = std::filesystem;

namespace {

std::vector<std::shared_ptr<SharedObject>>& loaded_objects() {
    static std::vector<std::shared_ptr<SharedObject>> objects;
    return objects;
}

std::set<std::string>& kernel_objects() {
    static std::set<std::string> paths;
    return paths;
}

// Per loaded object, the source it was loaded for and that source's roots
// (loader/compiler.h), which the object's debug information names by placeholder.
struct LoadedFrom {
    std::string source;
    std::vector<std::string> roots;
};
std::map<std::string, LoadedFrom>& loaded_from() {
    static std::map<std::string, LoadedFrom> objects;
    return objects;
}

long lines_in(const std::string& file) {
    static std::map<std::string, long> counted;
    auto it = counted.find(file);
    if (it != counted.end()) return it->second;
    std::ifstream in(file);
    long n = 0;
    for (std::string l; std::getline(in, l);) ++n;
    return counted[file] = n;
}

// Per stack, the innermost frame in a kernel object whose line (through
// inlining, as addr2line -i reports it) is in the kernel's own source rather
// than in the onboard headers or the system's: one addr2line per object for
// every stack at once.
std::vector<std::string> source_lines_of(const std::vector<std::vector<void*>>& stacks) {
    struct Frame {
        std::string object;
        uintptr_t offset = 0;
    };
    auto frame_of = [](void* address, Frame* f) {
        const auto pc = reinterpret_cast<uintptr_t>(address) - 1;  // inside the call, not after it
        Dl_info info{};
        if (!dladdr(reinterpret_cast<void*>(pc), &info) || !info.dli_fname || !kernel_objects().count(info.dli_fname)) {
            return false;
        }
        f->object = info.dli_fname;
        f->offset = pc - reinterpret_cast<uintptr_t>(info.dli_fbase);
        return true;
    };
    std::map<std::string, std::set<uintptr_t>> wanted;
    for (const auto& stack : stacks) {
        for (void* address : stack) {
            if (Frame f; frame_of(address, &f)) wanted[f.object].insert(f.offset);
        }
    }
    // (object, offset) -> the first acceptable location of its inline chain, or "".
    std::map<std::pair<std::string, uintptr_t>, std::string> located;
    for (const auto& [object, offsets] : wanted) {
        std::vector<std::string> cmd = {"addr2line", "-a", "-i", "-e", object};
        for (uintptr_t off : offsets) {
            char hex[32];
            std::snprintf(hex, sizeof hex, "0x%lx", static_cast<unsigned long>(off));
            cmd.push_back(hex);
        }
        std::string out;
        if (run_tool(cmd, &out) != 0) continue;
        std::istringstream lines(out);
        uintptr_t current = 0;
        bool found = false;
        for (std::string line; std::getline(lines, line);) {
            if (line.rfind("0x", 0) == 0) {
                current = static_cast<uintptr_t>(std::strtoull(line.c_str(), nullptr, 16));
                found = false;
                continue;
            }
            const size_t colon = line.rfind(':');
            if (found || colon == std::string::npos || line.compare(colon, 2, ":?") == 0 || line.rfind("??", 0) == 0) {
                continue;
            }
            const std::string where = line.substr(0, line.find(' ') == std::string::npos ? line.size() : line.find(' '));
            const auto from = loaded_from().find(object);
            const std::string file =
                restore_source_root(where.substr(0, where.rfind(':')), from == loaded_from().end() ? std::vector<std::string>{} : from->second.roots);
            const long number = std::strtol(where.c_str() + where.rfind(':') + 1, nullptr, 10);
            if (file.find("/include-") != std::string::npos || file.rfind("/usr/", 0) == 0) continue;
            // -O2 line tables can give out-of-line template code a line of the
            // including file that does not exist: such a location is no answer.
            if (number <= 0 || number > lines_in(file)) continue;
            located[{object, current}] = fs::path(file).filename().string() + ":" + std::to_string(number);
            found = true;
        }
    }
    std::vector<std::string> result;
    for (const auto& stack : stacks) {
        std::string where;
        for (void* address : stack) {
            Frame f;
            if (!frame_of(address, &f)) continue;
            auto it = located.find({f.object, f.offset});
            if (it != located.end()) {
                where = it->second;
                break;
            }
        }
        result.push_back(where);
    }
    return result;
}

// source_line_of's answers by stack (a kernel's calls into the runtime come
// from a few lines, over and over), forgotten when the kernels are unloaded:
// another object may load at the same addresses.
std::map<std::vector<void*>, std::string>& known_lines() {
    static std::map<std::vector<void*>, std::string> known;
    return known;
}

std::string source_line_of(const std::vector<void*>& frames) {
    auto it = known_lines().find(frames);
    if (it == known_lines().end()) it = known_lines().emplace(frames, source_lines_of({frames}).front()).first;
    return it->second;
}

// Tells the guard of users' code (base/user_code.h) where the object's code lies.
void add_user_code_ranges(void* handle) {
    link_map* map = nullptr;
    if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map) return;
    dl_iterate_phdr(
        [](dl_phdr_info* info, size_t, void* wanted) {
            if (info->dlpi_addr != static_cast<link_map*>(wanted)->l_addr) return 0;
            for (int i = 0; i < info->dlpi_phnum; ++i) {
                const ElfW(Phdr)& ph = info->dlpi_phdr[i];
                if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
                    user_code::add_code_range(info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz);
                }
            }
            return 1;
        },
        map);
}

}  // namespace

std::shared_ptr<SharedObject> SharedObject::open(const std::string& path, const std::string& source) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        throw LoadError(source + ": the compiled object does not load: " + (why ? why : "unknown reason"));
    }
    add_user_code_ranges(handle);
    Dl_info info{};
    if (void* entry = dlsym(handle, "kernel_entry"); entry && dladdr(entry, &info) && info.dli_fname) {
        kernel_objects().insert(info.dli_fname);
        kernel_source_line = &source_line_of;
        kernel_source_lines = &source_lines_of;
    }
    return std::shared_ptr<SharedObject>(new SharedObject(handle, source));
}

// Objects stay mapped until unload_kernels(): a kernel's code may still be on
// a core's stack when its owner lets go of it.
SharedObject::~SharedObject() = default;

void SharedObject::close() {
    if (handle_) dlclose(handle_);
    handle_ = nullptr;
}

void* SharedObject::find(const std::string& name) const { return handle_ ? dlsym(handle_, name.c_str()) : nullptr; }

void* SharedObject::symbol(const std::string& name) const {
    void* p = find(name);
    if (!p) throw LoadError(source_ + ": no symbol '" + name + "' (declare it extern \"C\")");
    return p;
}

}  // namespace pfsim

namespace pfsim {

std::vector<std::string> undefined_symbols(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    const std::string image((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::string> names;
    auto fits = [&](uint64_t offset, uint64_t bytes) { return offset <= image.size() && bytes <= image.size() - offset; };
    Elf64_Ehdr eh;
    if (!fits(0, sizeof eh)) return names;
    std::memcpy(&eh, image.data(), sizeof eh);
    if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64) return names;
    auto section = [&](uint64_t i, Elf64_Shdr& sh) {
        const uint64_t at = eh.e_shoff + i * sizeof(Elf64_Shdr);
        if (i >= eh.e_shnum || !fits(at, sizeof sh)) return false;
        std::memcpy(&sh, image.data() + at, sizeof sh);
        return true;
    };
    for (uint64_t i = 0; i < eh.e_shnum; ++i) {
        Elf64_Shdr sym, str;
        if (!section(i, sym) || sym.sh_type != SHT_DYNSYM || !section(sym.sh_link, str)) continue;
        if (!fits(sym.sh_offset, sym.sh_size) || !fits(str.sh_offset, str.sh_size)) return names;
        for (uint64_t at = sym.sh_offset; at + sizeof(Elf64_Sym) <= sym.sh_offset + sym.sh_size; at += sizeof(Elf64_Sym)) {
            Elf64_Sym s;
            std::memcpy(&s, image.data() + at, sizeof s);
            if (s.st_shndx != SHN_UNDEF || s.st_name == 0 || s.st_name >= str.sh_size) continue;
            const char* name = image.data() + str.sh_offset + s.st_name;
            names.emplace_back(name, strnlen(name, str.sh_size - s.st_name));
        }
    }
    return names;
}

void* load_symbol(KernelCompiler& compiler, const std::string& source, BuildKind kind, const std::string& symbol,
                  const std::vector<std::string>& include_dirs) {
    std::string object = compiler.compile(source, kind, include_dirs);
    const std::string abs = fs::absolute(source).lexically_normal().string();
    auto it = loaded_from().find(object);
    if (it != loaded_from().end() && it->second.source != abs) {
        // The same build of another copy of these sources is loaded: dlopen would
        // give back its handle, and the two would share their statics. This one
        // loads its own copy of the object, as a build of its own would be.
        const std::string own = object + "." + sha256_hex(reinterpret_cast<const uint8_t*>(abs.data()), abs.size()).substr(0, 16) + ".so";
        if (!fs::exists(own)) {
            const std::string tmp = temporary_name(own);
            fs::copy_file(object, tmp, fs::copy_options::overwrite_existing);
            fs::rename(tmp, own);
        }
        object = own;
    }
    loaded_from()[object] = {abs, source_roots(abs, include_dirs)};
    loaded_objects().push_back(SharedObject::open(object, source));
    return loaded_objects().back()->symbol(symbol);
}

namespace {

// The files of load_own_copy's copies, removed when the process exits.
struct OwnCopies {
    std::vector<std::string> paths;
    ~OwnCopies() {
        std::error_code ec;
        for (const std::string& p : paths) fs::remove(p, ec);
    }
};

OwnCopies& own_copies() {
    static OwnCopies copies;
    return copies;
}

}  // namespace

std::shared_ptr<SharedObject> load_own_copy(KernelCompiler& compiler, const std::string& source, BuildKind kind,
                                            const std::vector<std::string>& include_dirs) {
    const std::string object = compiler.compile(source, kind, include_dirs);
    const std::string abs = fs::absolute(source).lexically_normal().string();
    const std::string own = temporary_name(object) + ".own.so";
    fs::copy_file(object, own, fs::copy_options::overwrite_existing);
    own_copies().paths.push_back(own);
    loaded_from()[own] = {abs, source_roots(abs, include_dirs)};
    loaded_objects().push_back(SharedObject::open(own, source));
    return loaded_objects().back();
}

void unload_kernels() {
    user_code::clear_code_ranges();
    known_lines().clear();
    loaded_from().clear();
    for (const std::shared_ptr<SharedObject>& object : loaded_objects()) object->close();
    loaded_objects().clear();
}

}  // namespace pfsim

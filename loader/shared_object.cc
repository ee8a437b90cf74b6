#include "loader/shared_object.h"

#include <elf.h>

#include <cstring>
#include <fstream>
#include <iterator>

#include <dlfcn.h>

#include "loader/compiler.h"

namespace pfsim {

std::shared_ptr<SharedObject> SharedObject::open(const std::string& path, const std::string& source) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
        const char* why = dlerror();
        throw LoadError(source + ": the compiled object does not load: " + (why ? why : "unknown reason"));
    }
    return std::shared_ptr<SharedObject>(new SharedObject(handle, source));
}

// Objects stay mapped until the process ends: a kernel's code may still be on
// a core's stack when its owner lets go of it.
SharedObject::~SharedObject() = default;

void* SharedObject::find(const std::string& name) const { return dlsym(handle_, name.c_str()); }

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
    static std::vector<std::shared_ptr<SharedObject>> loaded;
    loaded.push_back(SharedObject::open(compiler.compile(source, kind, include_dirs), source));
    return loaded.back()->symbol(symbol);
}

}  // namespace pfsim

#include "loader/shared_object.h"

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

void* load_symbol(KernelCompiler& compiler, const std::string& source, BuildKind kind, const std::string& symbol,
                  const std::vector<std::string>& include_dirs) {
    static std::vector<std::shared_ptr<SharedObject>> loaded;
    loaded.push_back(SharedObject::open(compiler.compile(source, kind, include_dirs), source));
    return loaded.back()->symbol(symbol);
}

}  // namespace pfsim

// A shared object built by KernelCompiler, loaded with dlopen (RTLD_NOW,
// RTLD_LOCAL: every kernel keeps its own `kernel_entry`). Its undefined
// symbols (the kernel API) resolve against the pfsim executable, which is
// linked with -rdynamic.
#pragma once

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace pfsim {

// A source that compiled but cannot be used: it does not load, or lacks the
// symbol the caller needs. The message names the source and the symbol.
class LoadError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class SharedObject {
public:
    // Throws LoadError naming `source` when `path` does not load.
    static std::shared_ptr<SharedObject> open(const std::string& path, const std::string& source);
    ~SharedObject();
    SharedObject(const SharedObject&) = delete;
    SharedObject& operator=(const SharedObject&) = delete;

    // Unmaps the object (dlclose); find() finds nothing after. Only when none
    // of its code can run again.
    void close();
    // The address of `name`, or nullptr.
    void* find(const std::string& name) const;
    // The address of `name`; throws LoadError naming the source and the symbol.
    void* symbol(const std::string& name) const;
    const std::string& source() const { return source_; }

private:
    SharedObject(void* handle, std::string source) : handle_(handle), source_(std::move(source)) {}
    void* handle_;
    std::string source_;
};

}  // namespace pfsim

namespace pfsim {

// The symbols the shared object at `path` needs from elsewhere (its undefined
// dynamic symbols, mangled), read from its ELF file; empty when it is not a
// readable ELF64 object.
std::vector<std::string> undefined_symbols(const std::string& path);

class KernelCompiler;
enum class BuildKind;

// Compiles `source` for `kind` (through the cache), loads it and returns its
// `symbol` (an incore's kernel_entry, an orchestration's entry). The object
// stays loaded until unload_kernels(). Throws CompileError or LoadError.
void* load_symbol(KernelCompiler& compiler, const std::string& source, BuildKind kind, const std::string& symbol,
                  const std::vector<std::string>& include_dirs = {});

// Compiles `source` for `kind` (through the cache) and loads a copy of the
// object of its own (a new file, so a new dlopen with fresh statics, sharing
// nothing with other loads of the same build): the handle, open until
// unload_kernels(). The copy's file is removed when the process exits.
// Throws CompileError or LoadError.
std::shared_ptr<SharedObject> load_own_copy(KernelCompiler& compiler, const std::string& source, BuildKind kind,
                                            const std::vector<std::string>& include_dirs = {});

// Closes every object load_symbol loaded: their entry points are gone, and the
// next load of the same source starts from fresh statics, as in a new
// process. Only when none of their code can run again (the dies that ran them
// are destroyed); a session::Session calls it when it ends.
void unload_kernels();

}  // namespace pfsim

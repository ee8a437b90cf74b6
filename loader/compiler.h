// Run-time compilation of users' sources: incore kernels (one build per core
// type) and orchestrations, compiled with the host C++ compiler into shared
// objects against pfsim's onboard include set (include/, embedded in the
// binary), through a cache.
//
// Contract: compile() returns the path of a shared object built from exactly
// the given source, every header it includes, the flags, the compiler and this
// pfsim; it compiles only when no such object is cached. It throws CompileError
// with the compiler's own output when the source does not build, and
// std::runtime_error when the cache or the compiler cannot be used.
// Thread-compatible; several processes may share one cache directory (objects
// appear by atomic rename).
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "loader/embedded_files.h"

namespace pfsim {

enum class BuildKind { Aiv, Aic, Orchestration };
const char* build_kind_name(BuildKind kind);  // "aiv", "aic", "orchestration"

// A source that does not compile (or does not exist): the compiler's output,
// which names the file and line.
class CompileError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class KernelCompiler {
public:
    // `cache_dir` empty: $PFSIM_CACHE_DIR, else $XDG_CACHE_HOME/pfsim, else
    // $HOME/.cache/pfsim. The compiler is $PFSIM_CXX, else g++.
    explicit KernelCompiler(std::string cache_dir = "");

    std::string compile(const std::string& source, BuildKind kind,
                        const std::vector<std::string>& include_dirs = {});

    // The compiler command line for `kind` without source and output.
    std::vector<std::string> command(BuildKind kind, const std::vector<std::string>& include_dirs = {});
    const std::string& cache_dir() const { return cache_dir_; }
    // Where the embedded include set is unpacked (made on first use).
    const std::string& include_dir();
    uint64_t compiled() const { return compiled_; }  // compiler runs by this object
    uint64_t cached() const { return cached_; }      // answers from the cache

private:
    std::string compiler_identity();
    // The precompiled prelude for `cmd` as the flags that include it (-include
    // HEADER); empty until the cache has compiled a few kernels that could take
    // it (then it is built and shared through the cache), or when it cannot be built.
    std::vector<std::string> prelude_flags(const std::vector<std::string>& cmd);

    std::string cache_dir_, cxx_, include_dir_, compiler_id_;
    uint64_t compiled_ = 0, cached_ = 0;
};

// The embedded files of one tree (the include set, the shipped kernels, the
// Python package), plus `extra` files (path, content), unpacked once under
// `root` in a folder named by their content; returns it.
// Runs a tool (argv[0] from PATH), its stdout and stderr into `output`;
// returns its exit status.
int run_tool(const std::vector<std::string>& argv, std::string* output);

// [[block_local]] asks for a variable per core, but the cores that run one
// kernel here share its statics. A source with `[[block_local]] static TYPE
// NAME;` is compiled from a copy in which NAME is one element per core
// (indexed by the running core's id, below kBlockLocalCores of pfsim_kernel_abi.h),
// with #line keeping the user's file and line numbers. Empty: no
// [[block_local]]. Other [[block_local]] forms are a CompileError naming the line.
std::string with_block_local_per_core(const std::string& text, const std::string& source, const std::string& abs);

// Whether a kernel source reaches `#include <pto/pto-inst.hpp>` with nothing
// before it but blank lines, comments, `#pragma once`, includes of standard
// headers (`<cstdint>`, `<string.h>`, ...) and `#ifndef M ... #endif` blocks
// (no #else) of a macro the kernel's command line defines (__gm__, __aicore__,
// AICORE, __CPU_SIM, __PFSIM__), which the preprocessor skips. Such a kernel is compiled with
// PTO-ISA's headers from a precompiled prelude included first, which it cannot
// tell apart from its own include (the same object code, a third of the time);
// any other kernel is compiled from its text alone.
bool takes_precompiled_prelude(const std::string& text);

// A source's roots: its folder, its include folders and the folders of the
// headers it reaches by quoted includes beside their includer ("../shape.h"),
// less any that lies in another, in that order ("/" is none). Paths under root i reach the compile
// cache's key and the object's debug information and __FILE__ as
// kSourceRootPlaceholder/i, so that the same sources in other folders (a
// sandbox, a temporary copy) are the same build; restore_source_root() gives
// a path the object names back its folder.
extern const char kSourceRootPlaceholder[];
std::vector<std::string> source_roots(const std::string& source, const std::vector<std::string>& include_dirs);
std::string restore_source_root(const std::string& path, const std::vector<std::string>& roots);

std::string unpack_embedded(const std::string& root, const std::string& tree,
                            const std::vector<EmbeddedFile>& extra = {});

}  // namespace pfsim

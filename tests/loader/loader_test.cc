// Run-time compilation (cache, errors, symbols) and kernels that dereference
// __gm__ pointers, compiled from sources written here as a user would.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "loader/compiler.h"
#include "loader/shared_object.h"
#include "runtime/kernel_abi.h"
#include "runtime/platform/sim/sim_platform.h"
#include "runtime/worker.h"
#include "tests/support/harness.h"

namespace pfsim {
namespace {

namespace fs = std::filesystem;

std::string scratch(const std::string& name) {
    const char* tmp = std::getenv("TEST_TMPDIR");
    const fs::path dir = fs::path(tmp ? tmp : "/tmp") / "loader_test" / name;
    fs::create_directories(dir);
    return dir.string();
}

std::string write(const std::string& dir, const std::string& file, const std::string& text) {
    const std::string path = dir + "/" + file;
    std::ofstream(path) << text;
    return path;
}

const char* kHeader = R"(#include <cstdint>
#include <pto/pto-inst.hpp>
#include "tensor.h"
using namespace pto;
#include "intrinsic.h"
#include "pipe_sync.h"
)";

// The tests of the cache itself: a kernel without PTO-ISA's headers, whose
// compile costs a fraction of one that parses them (the cache builds the
// precompiled prelude only from a cache's fourth kernel). As many lines as
// kHeader, so that a line after it is the same line either way.
const char* kCacheHeader = R"(#include <cstdint>
#include "tensor.h"
// 3
// 4
// 5
// 6
)";

TEST(Compiler, ASecondCompileOfTheSameSourceComesFromTheCache) {
    const std::string dir = scratch("cache");
    const std::string src = write(dir, "k.cc", std::string(kCacheHeader) + R"(
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = 1; }
)");
    KernelCompiler first(dir + "/cache");
    const std::string so = first.compile(src, BuildKind::Aiv);
    EXPECT_EQ(first.compiled(), 1u);
    KernelCompiler second(dir + "/cache");
    EXPECT_EQ(second.compile(src, BuildKind::Aiv), so);
    EXPECT_EQ(second.compiled(), 0u);
    EXPECT_EQ(second.cached(), 1u);
    // Another core type is another build.
    EXPECT_NE(second.compile(src, BuildKind::Aic), so);
    EXPECT_EQ(second.compiled(), 1u);
}

// Processes that compile one source at the same time (a run's dies or ranks,
// tests side by side) build it once: the others wait and take its object.
TEST(Compiler, ProcessesCompilingOneSourceAtOnceBuildItOnce) {
    const std::string dir = scratch("at_once");
    fs::remove_all(dir + "/cache");
    // PTO-ISA's headers: a compile long enough that the three overlap.
    const std::string src = write(dir, "k.cc", std::string(kHeader) + R"(
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = 3; }
)");
    int start[2];
    ASSERT_EQ(pipe(start), 0);
    std::vector<pid_t> children;
    for (int i = 0; i < 3; ++i) {
        const pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            close(start[1]);
            char go;
            (void)!read(start[0], &go, 1);  // the parent's close starts all three at once
            KernelCompiler c(dir + "/cache");
            c.compile(src, BuildKind::Aiv);
            _exit(c.compiled() == 1 ? 10 : c.cached() == 1 ? 11 : 1);
        }
        children.push_back(pid);
    }
    close(start[0]);
    close(start[1]);
    int built = 0, taken = 0;
    for (const pid_t pid : children) {
        int status = 0;
        ASSERT_EQ(waitpid(pid, &status, 0), pid);
        ASSERT_TRUE(WIFEXITED(status));
        built += WEXITSTATUS(status) == 10;
        taken += WEXITSTATUS(status) == 11;
    }
    EXPECT_EQ(built, 1);
    EXPECT_EQ(taken, 2);
}

TEST(Compiler, AChangedIncludedHeaderRebuilds) {
    const std::string dir = scratch("header");
    write(dir, "shape.h", "constexpr int kN = 8;\n");
    const std::string src = write(dir, "k.cc", std::string(kCacheHeader) + R"(#include "shape.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = kN; }
)");
    KernelCompiler c(dir + "/cache");
    const std::string a = c.compile(src, BuildKind::Aiv);
    EXPECT_EQ(c.compile(src, BuildKind::Aiv), a);
    write(dir, "shape.h", "constexpr int kN = 9;\n");
    const std::string b = c.compile(src, BuildKind::Aiv);
    EXPECT_NE(a, b);
    EXPECT_EQ(c.compiled(), 2u);
}

// The compile cache is keyed by what is compiled, not by where: the same sources
// in another folder (another sandbox of a test, another temporary copy) are the
// same build, and any change of the source, of a header it includes (its own or
// one from an include folder) or of the flags is another.
TEST(Compiler, TheSameSourcesInAnotherFolderAreTheSameBuild) {
    const std::string dir = scratch("moved");
    fs::remove_all(dir);
    const std::string cache = dir + "/cache";
    auto copy_in = [&](const std::string& folder, int n, int m) {
        fs::create_directories(dir + "/" + folder);
        fs::create_directories(dir + "/" + folder + "-inc");  // beside the source's folder, not in it
        write(dir + "/" + folder, "shape.h", "constexpr int kN = " + std::to_string(n) + ";\n");
        write(dir + "/" + folder + "-inc", "more.h", "constexpr int kM = " + std::to_string(m) + ";\n");
        return write(dir + "/" + folder, "k.cc", std::string(kCacheHeader) + R"(#include "shape.h"
#include "more.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = kN + kM; }
)");
    };
    const std::string a = copy_in("a", 8, 1), b = copy_in("b", 8, 1);
    KernelCompiler first(cache);
    const std::string built = first.compile(a, BuildKind::Aiv, {dir + "/a-inc"});
    EXPECT_EQ(first.compiled(), 1u);
    KernelCompiler second(cache);
    EXPECT_EQ(second.compile(b, BuildKind::Aiv, {dir + "/b-inc"}), built);
    EXPECT_EQ(second.compiled(), 0u);
    // The object names no folder of either copy.
    std::string image;
    {
        std::ifstream in(built, std::ios::binary);
        image.assign(std::istreambuf_iterator<char>(in), {});
    }
    EXPECT_EQ(image.find(dir + "/a"), std::string::npos);
    EXPECT_NE(image.find(std::string(kSourceRootPlaceholder) + "/0/k.cc"), std::string::npos);
    // Changed in b only: its header, then a header of its include folder, then
    // the flags (the core type): each another build.
    KernelCompiler third(cache);
    write(dir + "/b", "shape.h", "constexpr int kN = 9;\n");
    const std::string header_changed = third.compile(b, BuildKind::Aiv, {dir + "/b-inc"});
    EXPECT_NE(header_changed, built);
    write(dir + "/b-inc", "more.h", "constexpr int kM = 2;\n");
    const std::string include_changed = third.compile(b, BuildKind::Aiv, {dir + "/b-inc"});
    EXPECT_NE(include_changed, header_changed);
    EXPECT_NE(include_changed, built);
    EXPECT_NE(third.compile(b, BuildKind::Aic, {dir + "/b-inc"}), include_changed);
    EXPECT_EQ(third.compiled(), 3u);
    // a, unchanged, is still its first build: a key remembers each of its
    // builds, not only its last.
    EXPECT_EQ(third.compile(a, BuildKind::Aiv, {dir + "/a-inc"}), built);
    EXPECT_EQ(third.compiled(), 3u);
    EXPECT_EQ(third.cached(), 1u);
}

// One include folder spelled with a trailing '/', or named more than once (the
// Python package names a callable's folder once per incore source), is one build.
TEST(Compiler, AnIncludeFolderSpelledAnotherWayIsTheSameBuild) {
    const std::string dir = scratch("spelled");
    fs::remove_all(dir);
    fs::create_directories(dir + "/inc");
    write(dir + "/inc", "shape.h", "constexpr int kN = 8;\n");
    const std::string src = write(dir, "k.cc", std::string(kCacheHeader) + R"(#include "shape.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = kN; }
)");
    KernelCompiler c(dir + "/cache");
    const std::string built = c.compile(src, BuildKind::Aiv, {dir + "/inc"});
    EXPECT_EQ(c.compile(src, BuildKind::Aiv, {dir + "/inc/"}), built);
    EXPECT_EQ(c.compile(src, BuildKind::Aiv, {dir + "/inc", dir + "/./inc/", dir + "/inc"}), built);
    EXPECT_EQ(c.compiled(), 1u);
}

// A kernel that includes a header of its parent folder ("../shape.h", as a
// case's kernels/aic/ and kernels/aiv/ share one) is the same build in
// another copy too, and another build once that copy's header changed while
// the first copy's did not (the header's folder is a root: its path in the
// cache is the copy's, not the first copy's).
TEST(Compiler, AHeaderBesideTheSourcesFolderIsInsideARootToo) {
    const std::string dir = scratch("parent-header");
    fs::remove_all(dir);
    // X/kernels/aiv/k.cc includes "../shape.h", which includes "n.h" of the
    // include folder X/inc, which includes "../gen/g.h".
    auto copy_in = [&](const std::string& x, int base) {
        for (const char* d : {"/kernels/aiv", "/inc", "/gen"}) fs::create_directories(dir + "/" + x + d);
        write(dir + "/" + x + "/kernels", "shape.h", "#include \"n.h\"\nconstexpr int kN = kBase + 1;\n");
        write(dir + "/" + x + "/inc", "n.h", "#include \"../gen/g.h\"\n");
        write(dir + "/" + x + "/gen", "g.h", "constexpr int kBase = " + std::to_string(base) + ";\n");
        return write(dir + "/" + x + "/kernels/aiv", "k.cc", std::string(kCacheHeader) + R"(#include "../shape.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = kN; }
)");
    };
    const std::string a = copy_in("a", 7), b = copy_in("b", 7);
    EXPECT_EQ(source_roots(a, {dir + "/a/inc"}),
              (std::vector<std::string>{dir + "/a/inc", dir + "/a/kernels", dir + "/a/gen"}));
    KernelCompiler first(dir + "/cache");
    const std::string built = first.compile(a, BuildKind::Aiv, {dir + "/a/inc"});
    KernelCompiler second(dir + "/cache");
    EXPECT_EQ(second.compile(b, BuildKind::Aiv, {dir + "/b/inc"}), built);
    EXPECT_EQ(second.compiled(), 0u);
    copy_in("b", 8);  // b's g.h changed; a's is as it was
    KernelCompiler third(dir + "/cache");
    EXPECT_NE(third.compile(b, BuildKind::Aiv, {dir + "/b/inc"}), built);
    EXPECT_EQ(third.compiled(), 1u);
}

TEST(Compiler, ASourcesRootsAreItsFolderAndIncludeFoldersNotInsideAnother) {
    EXPECT_EQ(source_roots("/w/k/a.cc", {}), std::vector<std::string>{"/w/k"});
    EXPECT_EQ(source_roots("/w/k/a.cc", {"/t/inc/", "/w/k/sub", "/w", "/t/inc"}),
              (std::vector<std::string>{"/t/inc", "/w"}));
    EXPECT_EQ(source_roots("/a.cc", {"/"}), std::vector<std::string>{});
    const std::vector<std::string> roots = {"/w/k", "/t/inc"};
    EXPECT_EQ(restore_source_root(std::string(kSourceRootPlaceholder) + "/1/x.h", roots), "/t/inc/x.h");
    EXPECT_EQ(restore_source_root(std::string(kSourceRootPlaceholder) + "/2/x.h", roots),
              std::string(kSourceRootPlaceholder) + "/2/x.h");
    EXPECT_EQ(restore_source_root("/usr/include/x.h", roots), "/usr/include/x.h");
}

// An object built from one copy and loaded for another names the other's
// source in a kernel's lines, also when the first copy is gone; and two copies
// loaded at once are two objects (dlopen would otherwise share one, statics
// and all).
TEST(Compiler, AnObjectBuiltForAnotherCopyNamesTheLoadedSourcesLines) {
    const std::string dir = scratch("moved_lines");
    fs::remove_all(dir);
    const std::string text = std::string(kCacheHeader) + R"(
static int64_t calls = 0;
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = ++calls; }
)";
    fs::create_directories(dir + "/a");
    fs::create_directories(dir + "/b");
    KernelCompiler c(dir + "/cache");
    c.compile(write(dir + "/a", "k.cc", text), BuildKind::Aiv);
    fs::remove_all(dir + "/a");
    const std::string b = write(dir + "/b", "k.cc", text);
    auto* entry = reinterpret_cast<void (*)(int64_t*)>(load_symbol(c, b, BuildKind::Aiv, "kernel_entry"));
    EXPECT_EQ(c.compiled(), 1u);
    ASSERT_NE(kernel_source_line, nullptr);
    EXPECT_EQ(kernel_source_line({reinterpret_cast<char*>(entry) + 1}), "k.cc:9");
    fs::create_directories(dir + "/a");
    const std::string a = write(dir + "/a", "k.cc", text);
    auto* other = reinterpret_cast<void (*)(int64_t*)>(load_symbol(c, a, BuildKind::Aiv, "kernel_entry"));
    EXPECT_EQ(c.compiled(), 1u);
    EXPECT_NE(other, entry);
    int64_t out = 0;
    entry(&out);
    other(&out);
    EXPECT_EQ(out, 1);  // its own `calls`
    unload_kernels();
}

// A cached build's headers are vouched for by their size and modification
// time once they are older than the build (two seconds' margin); a header
// whose stamp changed is hashed again.
TEST(Compiler, AnOldHeadersStampVouchesForItsBytesAndANewStampIsHashed) {
    const std::string dir = scratch("stamp");
    fs::remove_all(dir + "/cache");
    const std::string header = write(dir, "shape.h", "constexpr int kN = 8;\n");
    const std::string src = write(dir, "k.cc", std::string(kCacheHeader) + R"(#include "shape.h"
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = kN; }
)");
    KernelCompiler c(dir + "/cache");
    const std::string a = c.compile(src, BuildKind::Aiv);
    // The header an hour old, the manifest written now: its stamp is trusted.
    const auto hour_ago = fs::file_time_type::clock::now() - std::chrono::hours(1);
    auto age = [&] {
        fs::last_write_time(header, hour_ago);
        for (const auto& e : fs::directory_iterator(dir + "/cache/obj")) {
            if (e.path().extension() == ".deps") fs::remove(e.path());  // rebuilt by the next compile, stamp included
        }
    };
    age();
    EXPECT_EQ(c.compile(src, BuildKind::Aiv), a);
    EXPECT_EQ(c.compiled(), 2u);  // the manifest had to be made again
    // Other bytes of the same size behind the same old stamp: vouched for, not
    // read (what make and ccache's direct mode also trust).
    write(dir, "shape.h", "constexpr int kN = 9;\n");
    fs::last_write_time(header, hour_ago);
    EXPECT_EQ(c.compile(src, BuildKind::Aiv), a);
    EXPECT_EQ(c.cached(), 1u);
    // Touched: the stamp differs, the bytes are hashed, the build is new.
    fs::last_write_time(header, fs::file_time_type::clock::now());
    const std::string b = c.compile(src, BuildKind::Aiv);
    EXPECT_NE(a, b);
    EXPECT_EQ(c.compiled(), 3u);
}

TEST(Compiler, ErrorsAreTheCompilersNamingFileAndLine) {
    const std::string dir = scratch("error");
    const std::string src = write(dir, "broken.cc", std::string(kCacheHeader) + "\nint f() { return undeclared_name; }\n");
    KernelCompiler c(dir + "/cache");
    try {
        c.compile(src, BuildKind::Aiv);
        FAIL() << "compiled";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("broken.cc:8"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("undeclared_name"), std::string::npos) << e.what();
    }
    EXPECT_THROW(c.compile(dir + "/missing.cc", BuildKind::Aiv), CompileError);
}

TEST(Compiler, BlockLocalStorageBecomesOneCopyPerCoreKeepingTheLines) {
    const std::string text = "#include <cstdint>\n[[block_local]] static int32_t lane;  // per core\nint f() { return lane; }\n";
    const std::string out = with_block_local_per_core(text, "lane.cc", "/abs/lane.cc");
    EXPECT_NE(out.find("#line 1 \"/abs/lane.cc\""), std::string::npos) << out;
    EXPECT_NE(out.find("static int32_t pfsim_block_local_lane[256];"), std::string::npos) << out;
    EXPECT_NE(out.find("#define lane pfsim_block_local_lane[pfsim::block_local_index()]\n#line 3\n"), std::string::npos) << out;
    EXPECT_EQ(with_block_local_per_core("static int32_t lane;\n", "lane.cc", "/abs/lane.cc"), "");
    // A form it does not rewrite is refused, naming the line, never compiled shared.
    try {
        with_block_local_per_core("int a;\n[[block_local]] static int32_t lanes[2] = {0, 1};\n", "lanes.cc", "/abs/lanes.cc");
        FAIL() << "rewrote";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("lanes.cc:2: [[block_local]] is modelled for"), std::string::npos) << e.what();
    }
    // A compile error after the declaration still names the user's file and line.
    const std::string dir = scratch("block_local");
    const std::string src = write(dir, "lane.cc", std::string(kCacheHeader) + R"(
[[block_local]] static int32_t lane;
int g() { return undeclared_name + lane; }
)");
    KernelCompiler c(dir + "/cache");
    try {
        c.compile(src, BuildKind::Aiv);
        FAIL() << "compiled";
    } catch (const CompileError& e) {
        EXPECT_NE(std::string(e.what()).find("lane.cc:9"), std::string::npos) << e.what();
    }
}

TEST(Compiler, AKernelMayDefineGetSubblockidAsAMacroFirst) {
    // PyPTO's generated mixed kernels bridge the lane id this way.
    const std::string dir = scratch("subblock_macro");
    const std::string src = write(dir, "bridge.cc", R"(#include <cstdint>
static int32_t runtime_lane;
#define get_subblockid() runtime_lane
#include <pto/pto-inst.hpp>
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = get_subblockid(); }
)");
    KernelCompiler c(dir + "/cache");
    EXPECT_NO_THROW(c.compile(src, BuildKind::Aiv));
}

TEST(Compiler, OnlyAKernelWhosePtoIncludeComesFirstTakesThePrecompiledPrelude) {
    EXPECT_TRUE(takes_precompiled_prelude(kHeader));
    EXPECT_TRUE(takes_precompiled_prelude("// licence\n/* a\n block */\n#pragma once\n#include <cstdint>\n"
                                          "  #  include <string.h> // why\n\n#include <pto/pto-inst.hpp>\n"));
    // Anything that could change what PTO-ISA's headers see comes first: text alone.
    EXPECT_FALSE(takes_precompiled_prelude("#define PTO_FLAG 1\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#include \"tensor.h\"\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#include <tensor.h>\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#if 1\n#include <pto/pto-inst.hpp>\n#endif\n"));
    EXPECT_FALSE(takes_precompiled_prelude("int x;\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("/* #include <pto/pto-inst.hpp> */\n#include <cstdint>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#include <cstdint>\n"));
    // simpler's guard of macros pfsim defines on the command line: a skipped block.
    EXPECT_TRUE(takes_precompiled_prelude("#include <cstdint>\n#ifndef __gm__\n#define __gm__\n#endif\n"
                                          "#ifndef __aicore__\n#if 1\n#define X\n#else\n#endif\n"
                                          "#define __aicore__ [aicore]\n#endif\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#ifndef __gm__\n#else\n#define PTO_FLAG\n#endif\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#ifndef MY_FLAG\n#define MY_FLAG\n#endif\n#include <pto/pto-inst.hpp>\n"));
    EXPECT_FALSE(takes_precompiled_prelude("#ifndef __gm__\n#define __gm__\n#include <pto/pto-inst.hpp>\n"));

    const std::string dir = scratch("prelude");
    KernelCompiler c(dir + "/cache");
    const auto gch_files = [&] {
        int n = 0;
        std::error_code ec;
        for (const auto& e : fs::recursive_directory_iterator(dir + "/cache/prelude", ec)) {
            n += e.path().extension() == ".gch";
        }
        return n;
    };
    const auto compile_pto_first = [&](int i) {
        c.compile(write(dir, "k" + std::to_string(i) + ".cc", std::string(kHeader) + R"(
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = )" + std::to_string(i) + "; }\n"),
                  BuildKind::Aiv);
    };
    // Built when the cache compiles its fourth kernel that can take it (a cache
    // used for one or two kernels is spared its cost); a kernel that cannot
    // take it does not count.
    for (int i = 0; i < 3; ++i) compile_pto_first(i);
    c.compile(write(dir, "plain.cc", R"(#define LANE 3
#include <cstdint>
#include <pto/pto-inst.hpp>
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) { args[0] = LANE; }
)"),
              BuildKind::Aiv);
    EXPECT_EQ(gch_files(), 0);
    compile_pto_first(3);
    EXPECT_EQ(gch_files(), 1);
    EXPECT_EQ(c.compiled(), 5u);
    compile_pto_first(0);  // built before the prelude existed: still the cached object
    EXPECT_EQ(c.compiled(), 5u);
}

TEST(Compiler, AMissingEntryNamesTheSourceAndTheSymbol) {
    const std::string dir = scratch("symbol");
    const std::string src = write(dir, "noentry.cc", std::string(kCacheHeader) + "extern \"C\" void other() {}\n");
    KernelCompiler c(dir + "/cache");
    try {
        load_symbol(c, src, BuildKind::Aiv, "kernel_entry");
        FAIL() << "loaded";
    } catch (const LoadError& e) {
        EXPECT_NE(std::string(e.what()).find("noentry.cc"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("'kernel_entry'"), std::string::npos) << e.what();
    }
}

// Kernels that read and write GM through plain pointers.
const char* kRawKernels = R"(
// args: 0 in (int32 x n), 1 out (int32 x n), 2 n. out[i] = 3 * in[i] + 1.
extern "C" __aicore__ void kernel_entry(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ int32_t* src = reinterpret_cast<__gm__ int32_t*>(in->buffer.addr);
    __gm__ int32_t* dst = reinterpret_cast<__gm__ int32_t*>(out->buffer.addr);
    for (int64_t i = 0; i < args[2]; ++i) dst[i] = 3 * src[i] + 1;
    dcci(dst, ENTIRE_DATA_CACHE, CACHELINE_OUT);
}

// A raw store, then a tile load of the same line through L2, stored elsewhere.
extern "C" __aicore__ void store_then_tload(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ int32_t* src = reinterpret_cast<__gm__ int32_t*>(in->buffer.addr);
    __gm__ int32_t* dst = reinterpret_cast<__gm__ int32_t*>(out->buffer.addr);
    for (int i = 0; i < 16; ++i) src[i] = 100 + i;
    using G = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 16>, Stride<1, 1, 1, 1, 1>>;
    Tile<TileType::Vec, int32_t, 1, 16> t;
    TASSIGN(t, 0x100);
    TLOAD(t, G(src));
    set_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    wait_flag(PIPE_MTE2, PIPE_MTE3, EVENT_ID0);
    TSTORE(G(dst), t);
    pipe_sync();
}

// Prefetch `in`, wait, then read its first word through a pointer into out[0].
extern "C" __aicore__ void prefetch_then_read(__gm__ int64_t* args) {
    __gm__ ChipTensor* in = reinterpret_cast<__gm__ ChipTensor*>(args[0]);
    __gm__ ChipTensor* out = reinterpret_cast<__gm__ ChipTensor*>(args[1]);
    __gm__ int32_t* src = reinterpret_cast<__gm__ int32_t*>(in->buffer.addr);
    PrefetchAsyncContext ctx(get_dma_workspace(args, DMA_WORKSPACE_SDMA));
    using G = GlobalTensor<int32_t, Shape<1, 1, 1, 1, 128>, Stride<1, 1, 1, 1, 1>>;
    TPREFETCH_ASYNC(G(src), ctx).Wait(ctx.session);
    reinterpret_cast<__gm__ int32_t*>(out->buffer.addr)[0] = src[0];
}
)";

const Config& config(const std::vector<std::string>& sets) {
    static std::vector<std::unique_ptr<Config>> keep;
    keep.push_back(std::make_unique<Config>(test::config_with(sets)));
    return *keep.back();
}

class RawGm : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        if (die_) return;
        die_ = new SimPlatform("die", config({}));
        corrupt_ = new SimPlatform("corrupt", config({}));
        corrupt_->faults().prefetch_corrupt = true;
        const std::string dir = scratch("raw");
        source_ = new std::string(write(dir, "raw.cc", std::string(kHeader) + kRawKernels));
        compiler_ = new KernelCompiler(dir + "/cache");
    }
    static rt::KernelEntry entry(const std::string& name) {
        return reinterpret_cast<rt::KernelEntry>(load_symbol(*compiler_, *source_, BuildKind::Aiv, name));
    }
    // A ChipTensor (kept alive here) over `bytes` of fresh GM, filled with `data`.
    struct Tensor {
        uint64_t gm;
        std::unique_ptr<rt::ChipTensor> desc;
    };
    static Tensor tensor(SimPlatform& p, const std::vector<int32_t>& data) {
        Tensor t{p.gm_alloc(data.size() * 4), std::make_unique<rt::ChipTensor>()};
        p.gm_write(t.gm, data.data(), data.size() * 4);
        t.desc->buffer = {p.device_pointer(t.gm), data.size() * 4};
        return t;
    }
    static rt::LaunchResult run(SimPlatform& p, rt::KernelEntry e, std::vector<int64_t> args, bool sdma = false) {
        rt::WorkerOptions o;
        o.enable_sdma = sdma;
        rt::Worker w(p, o);
        rt::KernelLaunch l;
        l.name = "raw";
        l.entries.aiv = e;
        l.spec = rt::LaunchSpec{1, 1, false};
        l.uses_sdma = sdma;
        l.args = std::move(args);
        return w.run(l);
    }
    static std::vector<int32_t> read(SimPlatform& p, uint64_t gm, size_t n) {
        std::vector<int32_t> v(n);
        p.gm_read(gm, v.data(), n * 4);
        return v;
    }
    static SimPlatform *die_, *corrupt_;
    static std::string* source_;
    static KernelCompiler* compiler_;
};
SimPlatform* RawGm::die_ = nullptr;
SimPlatform* RawGm::corrupt_ = nullptr;
std::string* RawGm::source_ = nullptr;
KernelCompiler* RawGm::compiler_ = nullptr;

TEST_F(RawGm, PointerLoadsAndStoresReadAndWriteSimulatedGmAndTakeTime) {
    std::vector<int32_t> data(1000);
    for (size_t i = 0; i < data.size(); ++i) data[i] = static_cast<int32_t>(i * 7) - 300;
    Tensor in = tensor(*die_, data), out = tensor(*die_, std::vector<int32_t>(1000, -1));
    const uint64_t hits = die_->soc().l2.stats().hits, misses = die_->soc().l2.stats().misses;
    const rt::LaunchResult r = run(*die_, entry("kernel_entry"),
                                   {reinterpret_cast<int64_t>(in.desc.get()), reinterpret_cast<int64_t>(out.desc.get()), 1000});
    ASSERT_TRUE(r.ok()) << r.first_error();
    const std::vector<int32_t> got = read(*die_, out.gm, 1000);
    for (size_t i = 0; i < data.size(); ++i) ASSERT_EQ(got[i], 3 * data[i] + 1) << i;
    // Through the core's data cache to L2: the 1000 loads once per new 64 B line
    // (core.dcache_line_bytes), the 1000 stores each (write-back, no allocation
    // on a store miss: docs/configuration.md); a miss per new L2 line, hits after.
    EXPECT_GE(die_->soc().l2.stats().hits + die_->soc().l2.stats().misses - hits - misses, 1000u + 4000u / 64);
    EXPECT_GT(die_->soc().l2.stats().misses - misses, 0u);
    EXPECT_GT(r.kernel_time_ps, 2000u * 1000);  // at least a nanosecond an access
}

TEST_F(RawGm, ATileLoadSeesWhatAPointerStoreWrote) {
    Tensor in = tensor(*die_, std::vector<int32_t>(16, 0)), out = tensor(*die_, std::vector<int32_t>(16, -1));
    ASSERT_TRUE(run(*die_, entry("store_then_tload"),
                    {reinterpret_cast<int64_t>(in.desc.get()), reinterpret_cast<int64_t>(out.desc.get())}).ok());
    const std::vector<int32_t> got = read(*die_, out.gm, 16);
    for (int i = 0; i < 16; ++i) EXPECT_EQ(got[static_cast<size_t>(i)], 100 + i);
}

TEST_F(RawGm, PointerLoadsSeeWhatTheCacheHolds) {
    // With --inject prefetch-corrupt the first prefetched line has a byte
    // flipped in L2: a pointer load must see it, as a tile load does.
    for (SimPlatform* p : {die_, corrupt_}) {
        Tensor in = tensor(*p, std::vector<int32_t>(128, 5)), out = tensor(*p, std::vector<int32_t>(1, 0));
        const rt::LaunchResult r = run(*p, entry("prefetch_then_read"),
                                       {reinterpret_cast<int64_t>(in.desc.get()), reinterpret_cast<int64_t>(out.desc.get())},
                                       true);
        ASSERT_TRUE(r.ok()) << r.first_error();
        if (p == die_) {
            EXPECT_EQ(read(*p, out.gm, 1)[0], 5);
        } else {
            EXPECT_NE(read(*p, out.gm, 1)[0], 5);
        }
    }
}

}  // namespace
}  // namespace pfsim

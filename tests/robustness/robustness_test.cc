// Issue 47's probes, each made a regression test with its negative control:
// outputs never clobber inputs, long accesses, onboard profiles with repeated
// op names, the device's bad requests, a file size limit, faults that never
// fire, and small gaps of case files and documents. (Users' code that
// misbehaves: fuzz/kernel_corpus_test.cc.)
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/pfsim_cli.h"

namespace {

namespace fs = std::filesystem;
using pfsim::test::pfsim;
using pfsim::test::Result;
using pfsim::test::slurp;
using pfsim::test::tmp;

// The compile cache the other test targets share (a case's kernels built once
// for all of them); the tests of a damaged, unwritable or interrupted cache
// name a folder of their own.
const bool kCache = [] {
    setenv("PFSIM_CACHE_DIR", pfsim::test::shared_cache().c_str(), 1);
    return true;
}();

// A copy of the shipped prefetch_demo case in a folder of its own; its case file.
std::string demo_copy(const std::string& name) {
    const std::string dir = tmp(name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy("cases/prefetch_demo", dir, fs::copy_options::recursive);
    return dir + "/case.toml";
}

void edit(const std::string& path, const std::string& from, const std::string& to) {
    std::string text = slurp(path);
    const size_t at = text.find(from);
    ASSERT_NE(at, std::string::npos) << from;
    std::ofstream(path) << text.replace(at, from.size(), to);
}

// Item 1: a tensor's name is a file name under --outputs.
TEST(Outputs, ATensorNameReachingOutsideTheFolderIsRefused) {
    const std::string path = demo_copy("names");
    const std::string victim = tmp("victim.npy");
    std::ofstream(victim) << "precious";
    edit(path, "name = \"out\"", "name = \"../victim\"");
    const Result r = pfsim("run " + path + " --outputs " + tmp("names/outs"));
    EXPECT_EQ(r.status, 2);
    const std::string before = slurp(path).substr(0, slurp(path).find("name = \"../victim\""));
    const std::string line = std::to_string(std::count(before.begin(), before.end(), '\n') + 1);
    EXPECT_NE(r.err.find("case.toml:" + line + ": tensors.name: '../victim' is not a tensor name"), std::string::npos)
        << r.err;
    EXPECT_EQ(slurp(victim), "precious");
    edit(path, "name = \"../victim\"", "name = \"\"");
    EXPECT_EQ(pfsim("run " + path).status, 2);
    // Negative control: a plain name is written into the folder.
    edit(path, "name = \"\"", "name = \"victim\"");
    const Result ok = pfsim("run " + path + " --outputs " + tmp("names/outs"));
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_TRUE(fs::exists(tmp("names/outs/victim.npy")));
}

// Item 2: an output naming one of the run's inputs is refused before anything is written.
TEST(Outputs, AnOutputNamingAnInputIsRefusedAndTheInputKept) {
    const std::string path = demo_copy("clobber");
    const std::string kernel = tmp("clobber/kernels/aiv/kernel_prefetch_copy.cpp");
    const std::string source = slurp(kernel), case_text = slurp(path);
    const Result trace = pfsim("run " + path + " --trace " + tmp("clobber/kernels/../kernels/aiv/kernel_prefetch_copy.cpp"));
    EXPECT_EQ(trace.status, 2);
    EXPECT_NE(trace.err.find("is the source of incore 0"), std::string::npos) << trace.err;
    EXPECT_EQ(slurp(kernel), source);
    const Result junit = pfsim("check " + path + " --junit " + path);
    EXPECT_EQ(junit.status, 2);
    EXPECT_NE(junit.err.find("--junit " + path + ": is the case file"), std::string::npos) << junit.err;
    const Result case_trace = pfsim("run " + path + " --trace " + path);
    EXPECT_EQ(case_trace.status, 2);
    EXPECT_EQ(slurp(path), case_text);
    const std::string config = tmp("clobber/extra.toml");
    std::ofstream(config) << "[l2]\n";
    EXPECT_EQ(pfsim("run " + path + " --config " + config + " --trace " + config).status, 2);
    EXPECT_EQ(slurp(config), "[l2]\n");
    // Negative control: a fresh file is written.
    const Result ok = pfsim("run " + path + " --trace " + tmp("clobber/t.json"));
    EXPECT_EQ(ok.status, 0) << ok.err;
    EXPECT_TRUE(fs::exists(tmp("clobber/t.json")));
}

// Item 3: a replayed access of 4 GiB and more is one access of that length.
TEST(Replay, AccessesOf4GiBAndMoreAreReplayedWhole) {
    for (const uint64_t bytes : {uint64_t{4294967808}, uint64_t{4294967296}, uint64_t{4096}}) {
        const std::string trace = pfsim::test::write_file("long.trace", "R 0x0 " + std::to_string(bytes) + "\n");
        const Result r = pfsim("replay " + trace + " --json --set l2.line_bytes=65536");
        ASSERT_EQ(r.status, 0) << bytes << r.err;
        const auto j = nlohmann::json::parse(r.out);
        EXPECT_EQ(j["line_accesses"].get<uint64_t>(), (bytes + 65535) / 65536) << bytes;  // 4096: the control
    }
}

// Item 4: repeated op names pair in order.
TEST(Diff, AnOnboardProfileWithRepeatedOpNamesMatchesItself) {
    const std::string header = "Op Name,Task Duration(us),Block Dim\n";
    const std::string a = pfsim::test::write_file("a.csv", header + "matmul,10,1\nadd,2,1\nmatmul,30,1\n");
    const Result same = pfsim("diff " + a + " " + a + " --json --max-regression 0");
    EXPECT_EQ(same.status, 0) << same.err;
    for (const auto& k : nlohmann::json::parse(same.out)["kernels"]) EXPECT_EQ(k["delta_pct"], 0) << k;
    // Negative control: the second matmul slower in B fails the gate, named.
    const std::string b = pfsim::test::write_file("b.csv", header + "matmul,10,1\nadd,2,1\nmatmul,33,1\n");
    const Result slower = pfsim("diff " + a + " " + b + " --max-regression 5");
    EXPECT_EQ(slower.status, 1);
    EXPECT_NE(slower.err.find("matmul is 10.0"), std::string::npos) << slower.err;
}

// Item 18: an endless or binary document is refused at once.
TEST(Diff, AnEndlessBinaryInputIsRefusedAtOnce) {
    const std::string a = pfsim::test::write_file("one.csv", "Op Name,Task Duration(us)\nadd,2\n");
    const Result r = pfsim("diff " + a + " /dev/zero");
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("/dev/zero: not a pfsim summary, check report, trace or profile (binary data)"), std::string::npos)
        << r.err;
}

// Item 11: bad requests get an error reply; the device keeps serving.
TEST(Device, ARequestThatIsNotAnObjectOrAsksForHugeBytesIsAnErrorReply) {
    const std::string data = pfsim::test::write_file("data.bin", std::string(16, '\0'));
    const std::string requests = pfsim::test::write_file(
        "requests.jsonl",
        "[1, 2]\n"
        "{\"op\": \"run\", \"handle\": 0, \"data\": \"" + data + "\", \"tensors\": [{\"dtype\": \"float32\", \"shape\": [4], "
        "\"offset\": 0, \"bytes\": 9223372036854775808}]}\n"
        "{\"op\": \"close\"}\n");
    const Result r = pfsim("device < " + requests);
    EXPECT_EQ(r.status, 0) << r.err;
    std::istringstream lines(r.out);
    std::string line;
    std::vector<nlohmann::json> replies;
    while (std::getline(lines, line)) replies.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(replies.size(), 4u) << r.out;
    EXPECT_EQ(replies[1]["kind"], "protocol");
    EXPECT_NE(replies[1]["message"].get<std::string>().find("not a JSON object"), std::string::npos);
    EXPECT_EQ(replies[2]["kind"], "bad_input");
    EXPECT_NE(replies[2]["message"].get<std::string>().find("bytes = 9223372036854775808, but its shape and dtype make 16"),
              std::string::npos)
        << replies[2];
    EXPECT_EQ(replies[3], nlohmann::json({{"ok", true}}));  // the control: still serving
}

// Item 13: a tensor of 4 GiB and more (GM is 64 GiB) runs, end to end: the
// device maps it from a sparse file (its pages are read lazily: the run keeps
// a few MiB resident), and a kernel copies what lies around its byte offset
// 4 GiB through a TLOAD/TSTORE and a scalar load/store. Before the fix the
// run was refused as "outside GM or MMIO".
TEST(Device, ATensorOf4GiBAndMoreRuns) {
    constexpr uint64_t kFar = uint64_t{1} << 30;  // the element at byte offset 4 GiB
    constexpr uint64_t kIn = 4 * kFar + 4096, kOut = 4096;
    const std::string data = tmp("far.bin");
    {
        std::ofstream f(data, std::ios::binary | std::ios::trunc);
        f.seekp(static_cast<std::streamoff>(4 * (kFar - 32)));
        for (int i = 0; i < 64; ++i) {
            const float v = static_cast<float>(100 + i);
            f.write(reinterpret_cast<const char*>(&v), sizeof v);
        }
    }
    fs::resize_file(data, kIn + kOut);  // sparse: two written pages
    const std::string dir = fs::absolute("tests/robustness/far_copy").string();
    auto tensor = [](uint64_t elements, uint64_t offset) {
        return nlohmann::json{{"dtype", "float32"}, {"shape", nlohmann::json::array({elements})}, {"offset", offset},
                              {"bytes", 4 * elements}, {"hash", false}};
    };
    const nlohmann::json reg = {{"op", "register"},
                                {"orchestration", {{"source", dir + "/far_copy_orch.cpp"}}},
                                {"incores", {{{"func_id", 0}, {"source", dir + "/kernel_far_copy.cpp"}, {"core_type", "aiv"}}}}};
    const nlohmann::json run = {{"op", "run"}, {"handle", 0}, {"data", data},
                                {"tensors", {tensor(kIn / 4, 0), tensor(kOut / 4, kIn)}}};
    const std::string requests =
        pfsim::test::write_file("far.jsonl", reg.dump() + "\n" + run.dump() + "\n{\"op\": \"close\"}\n");
    const Result r = pfsim("device < " + requests);
    EXPECT_EQ(r.status, 0) << r.err;
    std::istringstream lines(r.out);
    std::vector<nlohmann::json> replies;
    for (std::string line; std::getline(lines, line);) replies.push_back(nlohmann::json::parse(line));
    ASSERT_EQ(replies.size(), 4u) << r.out << r.err;
    ASSERT_EQ(replies[2]["ok"], true) << replies[2];
    std::ifstream f(data, std::ios::binary);
    f.seekg(static_cast<std::streamoff>(kIn));
    float out[65] = {};
    f.read(reinterpret_cast<char*>(out), sizeof out);
    for (int i = 0; i < 64; ++i) EXPECT_EQ(out[i], static_cast<float>(100 + i)) << i;
    EXPECT_EQ(out[64], 132.0f);  // element 2^30
    // The file on disk stays sparse: the run allocates no block for a hole it only mapped
    // (a memory file's holes take pages whatever is done, so only a disk's are counted).
    struct statfs where {};
    struct stat st {};
    ASSERT_EQ(statfs(data.c_str(), &where), 0);
    ASSERT_EQ(stat(data.c_str(), &st), 0);
    if (where.f_type != TMPFS_MAGIC) {
        EXPECT_LT(st.st_blocks * 512, 1 << 20) << "bytes allocated of " << data;
    }
    fs::remove(data);
}

// Item 12: a trace past `ulimit -f` is a write error naming the file.
TEST(Outputs, AFileSizeLimitIsAWriteErrorNamingTheFile) {
    const std::string trace = tmp("limited.json");
    ASSERT_EQ(pfsim("run prefetch_demo").status, 0);  // compiled before the limit
    const std::string cmd = "ulimit -f 2; " + std::string(std::getenv("PFSIM")) + " run prefetch_demo --trace " + trace +
                            " >/dev/null 2>" + tmp("limited.err");
    const int raw = std::system(("sh -c '" + cmd + "'").c_str());
    ASSERT_TRUE(WIFEXITED(raw)) << "killed by signal " << WTERMSIG(raw);
    EXPECT_EQ(WEXITSTATUS(raw), 2);
    EXPECT_NE(slurp(tmp("limited.err")).find(trace + ": cannot write the trace file (File too large)"), std::string::npos)
        << slurp(tmp("limited.err"));
    // Negative control: without the limit the same trace is written.
    EXPECT_EQ(pfsim("run prefetch_demo --trace " + trace).status, 0);
}

// Item 15: an injected fault that never fires says so.
TEST(Faults, AnInjectedFaultThatNeverFiresSaysSo) {
    const Result never = pfsim("run prefetch_demo --inject sdma-error:99");
    EXPECT_NE(never.err.find("--inject sdma-error:99: did not fire"), std::string::npos) << never.err;
    const Result fired = pfsim("run prefetch_demo --inject sdma-error:1");
    EXPECT_EQ(fired.err.find("did not fire"), std::string::npos) << fired.err;
    EXPECT_NE(fired.out.find("fault            sdma-error"), std::string::npos) << fired.out;
}

// Item 18: small gaps of case files.
TEST(CaseFile, RandomWithLowAboveHighIsRefusedAndAByteOrderMarkAccepted) {
    const std::string path = demo_copy("gaps");
    edit(path, "init = \"arange\"\nstep = 0.125", "init = \"random\"\nlow = 2\nhigh = 1");
    const Result r = pfsim("run " + path);
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("tensors.low: is above high"), std::string::npos) << r.err;
    edit(path, "low = 2\nhigh = 1", "low = 1\nhigh = 2");  // the control
    const Result ok = pfsim("run " + path);
    EXPECT_EQ(ok.status, 0) << ok.err;
    const std::string bom = demo_copy("bom");
    std::ofstream(bom + ".tmp") << "\xEF\xBB\xBF" << slurp(bom);
    fs::rename(bom + ".tmp", bom);
    const Result b = pfsim("run " + bom);
    EXPECT_EQ(b.status, 0) << b.err;
}

TEST(CaseFile, TwoCasesOfOneNameAreRefusedWithATracePrefix) {
    const std::string a = demo_copy("twin_a"), b = demo_copy("twin_b");
    const Result r = pfsim("check " + a + " " + b + " --trace " + tmp("twins"));
    EXPECT_EQ(r.status, 2);
    EXPECT_NE(r.err.find("are both named 'prefetch_demo': their traces would be the same files"), std::string::npos) << r.err;
    edit(b, "name = \"prefetch_demo\"", "name = \"prefetch_demo_2\"");  // the control
    const Result ok = pfsim("check " + a + " " + b + " --trace " + tmp("twins"));
    EXPECT_EQ(ok.status, 0) << ok.out << ok.err;
    EXPECT_TRUE(fs::exists(tmp("twins.prefetch_demo_2.on.json")));
}

}  // namespace

namespace {

// Runs pfsim with PFSIM_CACHE_DIR set to `cache` for this call.
Result pfsim_with_cache(const std::string& cache, const std::string& args) {
    const std::string kept = std::getenv("PFSIM_CACHE_DIR");
    setenv("PFSIM_CACHE_DIR", cache.c_str(), 1);
    const Result r = pfsim(args);
    setenv("PFSIM_CACHE_DIR", kept.c_str(), 1);
    return r;
}

// Item 10: a damaged object or header in the compile cache is made again.
TEST(CompileCache, ATruncatedObjectOrHeaderIsBuiltAgain) {
    const std::string cache = tmp("damaged_cache");
    ASSERT_EQ(pfsim_with_cache(cache, "run prefetch_demo").status, 0);
    std::vector<std::string> objects;
    std::string header;
    for (const auto& e : fs::recursive_directory_iterator(cache)) {
        if (e.path().extension() == ".so") objects.push_back(e.path().string());
        if (e.path().filename() == "tensor.h") header = e.path().string();
    }
    ASSERT_FALSE(objects.empty());
    ASSERT_FALSE(header.empty());
    const std::string header_text = slurp(header);
    std::vector<uintmax_t> sizes;
    for (const std::string& o : objects) {
        sizes.push_back(fs::file_size(o));
        fs::resize_file(o, sizes.back() / 2);  // what a full disk or a killed writer leaves
    }
    fs::resize_file(header, 10);
    const Result r = pfsim_with_cache(cache, "run prefetch_demo");
    EXPECT_EQ(r.status, 0) << r.err;
    for (size_t i = 0; i < objects.size(); ++i) EXPECT_EQ(fs::file_size(objects[i]), sizes[i]) << objects[i];
    EXPECT_EQ(slurp(header), header_text);
    // A cache path that is a file, not a folder.
    const std::string file = pfsim::test::write_file("not_a_folder", "x");
    const Result f = pfsim_with_cache(file, "run prefetch_demo");
    EXPECT_EQ(f.status, 2);
    EXPECT_NE(f.err.find("the compile cache '" + file + "' is not a folder"), std::string::npos) << f.err;
}

// Item 17: a compile that cannot write (a full /tmp; here the file-size limit,
// which fails the same writes without filling a disk) says what it could not
// write and why, not only the compiler's status.
TEST(Messages, ACompileThatCannotWriteSaysWhatAndWhy) {
    const std::string cache = tmp("unwritable_cache");
    ASSERT_EQ(pfsim_with_cache(cache, "run prefetch_demo").status, 0);  // unpacks the include set and cases
    fs::remove_all(cache + "/obj");
    fs::remove_all(cache + "/prelude");
    const std::string err = tmp("unwritable.err");
    const int raw = std::system(("sh -c 'ulimit -f 64; PFSIM_CACHE_DIR=" + cache + " " + std::getenv("PFSIM") +
                                 " run prefetch_demo >/dev/null 2>" + err + "'")
                                    .c_str());
    ASSERT_TRUE(WIFEXITED(raw)) << "killed by signal " << WTERMSIG(raw);
    EXPECT_EQ(WEXITSTATUS(raw), 2) << slurp(err);
    EXPECT_NE(slurp(err).find("error writing to"), std::string::npos) << slurp(err);
    EXPECT_NE(slurp(err).find("File too large"), std::string::npos) << slurp(err);
    EXPECT_EQ(slurp(err).find("failed with status"), std::string::npos) << slurp(err);
    EXPECT_EQ(pfsim_with_cache(cache, "run prefetch_demo").status, 0);  // the control: without the limit it builds
}

// Item 17: small messages.
TEST(Messages, AnArgWithoutValueAndTheOrchestrationsLogErrorAreTold) {
    const Result arg = pfsim("run gemv_stream --arg rows");
    EXPECT_EQ(arg.status, 2);
    EXPECT_NE(arg.err.find("--arg rows: takes NAME=VALUE"), std::string::npos) << arg.err;
    const std::string path = demo_copy("log_error");
    std::ofstream(path, std::ios::app) << "\n[[tensors]]\nname = \"extra\"\nshape = [4]\n";
    const Result log = pfsim("run " + path);
    EXPECT_NE(log.err.find("orchestration: ERROR prefetch_demo_orchestration: prefetch_demo: expected 2 arguments (in, out), got 3"), std::string::npos)
        << log.err;
    EXPECT_EQ(pfsim("run prefetch_demo").err.find("orchestration:"), std::string::npos);  // the control
}

}  // namespace

namespace {

int shell(const std::string& cmd) {
    const int raw = std::system(("sh -c '" + cmd + "' >/dev/null 2>&1").c_str());
    return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

size_t entries(const std::string& dir, const std::string& containing) {
    size_t n = 0;
    for (const auto& e : fs::recursive_directory_iterator(dir)) n += e.path().filename().string().find(containing) != std::string::npos;
    return n;
}

// A script that starts `pfsim COMMAND` (TMPDIR=dir), waits until it runs a
// child (`pfsim run-request`) and has made its folder, sends it SIGNAL, and
// exits 0 only when none of the children it had runs on once it ended.
const char* const kInterruptCodes = "10: no child ran, 11: no folder, 12: a child runs on";
std::string interrupt_script(const std::string& dir, const std::string& command, const std::string& signal) {
    const std::string script = dir + "/../interrupt_" + signal + ".sh";
    std::ofstream(script) << "TMPDIR=" << dir << " " << std::getenv("PFSIM") << " " << command << " >/dev/null 2>&1 &\n"
                          << "p=$!\n"
                             "n=0\n"
                             "until kids=$(pgrep -P $p -f run-request); [ -n \"$kids\" ]; do\n"
                             "  n=$((n + 1)); [ $n -gt 100 ] && exit 10; sleep 0.1\n"
                             "done\n"
                             "ls " << dir << " | grep -q pfsim || exit 11\n"
                          << "kill -" << signal << " $p\n"
                          << "wait $p\n"
                             "sleep 1\n"
                             "for k in $kids; do kill -0 $k 2>/dev/null && exit 12; done\n"
                             "exit 0\n";
    return script;
}

// Items 6 and 14: an interrupted check stops its children and removes its
// folder; an interrupted compile leaves nothing in the cache; calibrate's
// folder goes on every way out.
TEST(Interrupts, NothingIsLeftBehind) {
    const std::string dir = tmp("interrupt_tmpdir");
    fs::create_directories(dir);
    const std::string pfsim_path = std::getenv("PFSIM");
    // SIGTERM to check only: its children must not run on.
    EXPECT_EQ(shell("sh " + interrupt_script(dir, "check gemv_stream matmul_tiled", "TERM")), 0) << kInterruptCodes;
    EXPECT_EQ(entries(dir, "pfsim"), 0u);
    // A compile interrupted in the compiler.
    const std::string cache = tmp("interrupt_cache");
    EXPECT_EQ(shell("PFSIM_CACHE_DIR=" + cache + " timeout -s TERM 1 " + pfsim_path +
                    " compile cases/prefetch_demo/kernels/aiv/kernel_prefetch_copy.cpp"),
              124);
    EXPECT_EQ(entries(cache, ".tmp."), 0u);
    // calibrate with a figure it does not know: exit 2, its folder gone.
    EXPECT_EQ(shell("TMPDIR=" + dir + " " + pfsim_path + " calibrate --only nosuch"), 2);
    EXPECT_EQ(entries(dir, "pfsim"), 0u);
    // The control: a check that ends leaves nothing either, and the compile completes.
    EXPECT_EQ(shell("TMPDIR=" + dir + " " + pfsim_path + " check prefetch_demo"), 0);
    EXPECT_EQ(entries(dir, "pfsim"), 0u);
}

// Item 6: a child that cannot be started (the process table full: a shim makes the
// start of `pfsim run-request` fail) ends check and sweep with a message saying why,
// exit 2, and their folder removed.
TEST(Interrupts, AChildThatCannotStartEndsTheCommandAndRemovesItsFolder) {
    const std::string dir = tmp("spawn_tmpdir");
    fs::create_directories(dir);
    const std::string shim = fs::absolute(std::getenv("FAIL_SPAWN")).string();
    for (const std::string command : {"check prefetch_demo", "sweep prefetch_demo --grid l2.ways=12,24"}) {
        const std::string err = tmp("spawn.err");
        const int raw = std::system(("TMPDIR=" + dir + " LD_PRELOAD=" + shim + " " + std::getenv("PFSIM") + " " +
                                     command + " >/dev/null 2>" + err)
                                        .c_str());
        ASSERT_TRUE(WIFEXITED(raw)) << command;
        EXPECT_EQ(WEXITSTATUS(raw), 2) << command << ": " << slurp(err);
        EXPECT_NE(slurp(err).find("cannot start pfsim run-request: Resource temporarily unavailable"), std::string::npos)
            << command << ": " << slurp(err);
        EXPECT_EQ(entries(dir, "pfsim"), 0u) << command;
    }
    // The control: without the shim the same check runs its children.
    EXPECT_EQ(shell("TMPDIR=" + dir + " " + std::getenv("PFSIM") + " check prefetch_demo"), 0);
}

// Item 6: SIGINT to a sweep running two children at once stops them and removes its folder.
// The script checks, while the sweep runs, that a child (its command line ends a value of the
// grid; the sweep's own lists both) and the folder are there, so the checks after the
// interrupt can fail; then interrupts it.
TEST(Interrupts, AnInterruptedSweepStopsItsChildrenAndRemovesItsFolder) {
    const std::string dir = tmp("interrupt_sweep");
    fs::remove_all(dir);
    fs::create_directories(dir);
    EXPECT_EQ(shell("sh " + interrupt_script(dir, "sweep gemv_stream --grid orch.poll_interval=0.502us,0.503us --jobs 2", "INT")), 0)
        << kInterruptCodes;
    EXPECT_EQ(entries(dir, "pfsim"), 0u);
}

}  // namespace

namespace {

// Item 18: on a usage error stdout stays empty.
TEST(Messages, UsageErrorsKeepStdoutEmpty) {
    const Result none = pfsim("");
    EXPECT_EQ(none.status, 2);
    EXPECT_EQ(none.out, "");
    EXPECT_NE(none.err.find("usage: pfsim COMMAND"), std::string::npos) << none.err;
    const Result json = pfsim("help --json");
    EXPECT_EQ(json.status, 2);
    EXPECT_EQ(json.out, "");
    EXPECT_NE(json.err.find("help takes no argument"), std::string::npos) << json.err;
    const Result help = pfsim("help");  // the control
    EXPECT_EQ(help.status, 0);
    EXPECT_NE(help.out.find("usage: pfsim COMMAND"), std::string::npos);
}

}  // namespace

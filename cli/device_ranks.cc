// `pfsim device --ranks N`: the requests of a level-3 client (the Python
// package's L3 worker) to N dies of one simulation. The protocol is in
// docs/python.md ("Several dies").
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "session/summary.h"
#include "base/json_integer.h"
#include "cli/device_requests.h"

namespace pfsim {

using nlohmann::json;

std::unique_ptr<api::RankSession> make_rank_session(const Config& cfg, const std::string& count, bool enable_sdma) {
    if (count.empty() || count.size() > 3 || count.find_first_not_of("0123456789") != std::string::npos) {
        throw std::invalid_argument("device: --ranks takes a number of dies, not '" + count + "'");
    }
    return std::make_unique<api::RankSession>(cfg, static_cast<uint32_t>(std::stoul(count)), enable_sdma);
}

namespace {

// The bytes [offset, offset + bytes) of `path`, read or written whole.
void file_io(const std::string& path, uint64_t offset, void* data, uint64_t bytes, bool write) {
    const int fd = ::open(path.c_str(), (write ? O_WRONLY : O_RDONLY) | O_CLOEXEC);
    if (fd < 0) throw api::BadInput("cannot open " + path + ": " + std::strerror(errno));
    uint64_t done = 0;
    while (done < bytes) {
        auto* at = static_cast<char*>(data) + done;
        const ssize_t n = write ? ::pwrite(fd, at, bytes - done, static_cast<off_t>(offset + done))
                                : ::pread(fd, at, bytes - done, static_cast<off_t>(offset + done));
        if (n <= 0) {
            const std::string why = n < 0 ? std::strerror(errno) : "the file is shorter";
            ::close(fd);
            throw api::BadInput("cannot " + std::string(write ? "write " : "read ") + std::to_string(bytes) +
                                " bytes at offset " + std::to_string(offset) + " of " + path + ": " + why);
        }
        done += static_cast<uint64_t>(n);
    }
    ::close(fd);
}

// Options of a one-die run that a run of several dies does not take yet.
const char* const kOneDieOnly[] = {"sanitize", "inject"};

}  // namespace

json serve_ranks(api::RankSession& ranks, const Config& cfg, const json& request) {
    const std::string op = request.at("op").get<std::string>();
    if (op == "register") return {{"ok", true}, {"handle", ranks.register_callable(callable_of(request))}};
    if (op == "alloc") {
        const auto a = ranks.alloc(json_integer<uint32_t>(request.at("rank")),
                                   json_integer<uint64_t>(request.at("bytes")), request.value("window", false));
        return {{"ok", true}, {"gm", a.gm}, {"pointer", a.pointer}};
    }
    if (op == "free") {
        ranks.free(json_integer<uint32_t>(request.at("rank")), json_integer<uint64_t>(request.at("gm")));
        return {{"ok", true}};
    }
    if (op == "write" || op == "read") {
        const uint32_t rank = json_integer<uint32_t>(request.at("rank"));
        const uint64_t gm = json_integer<uint64_t>(request.at("gm"));
        const uint64_t bytes = json_integer<uint64_t>(request.at("bytes"));
        const std::string file = request.at("file").get<std::string>();
        const uint64_t offset = json_integer<uint64_t>(request.at("offset"));
        std::vector<uint8_t> data(bytes);
        if (op == "write") {
            file_io(file, offset, data.data(), bytes, false);
            ranks.write(rank, gm, data.data(), bytes);
        } else {
            ranks.read(rank, gm, data.data(), bytes);
            file_io(file, offset, data.data(), bytes, true);
        }
        return {{"ok", true}};
    }
    if (op == "run_ranks") {
        for (const char* key : kOneDieOnly) {
            if (request.contains(key)) {
                throw api::BadInput(std::string("run_ranks: '") + key +
                                    "' is not modelled on several dies yet (a one-die Worker's run takes it)");
            }
        }
        if (request.contains("trace")) {
            throw api::BadInput("run_ranks: 'trace' names one file for several dies: give each call its own "
                                "(calls[i].trace, that rank's die)");
        }
        std::vector<api::RankCallRequest> calls;
        for (const json& c : request.at("calls")) {
            api::RankCallRequest call;
            call.rank = json_integer<uint32_t>(c.at("rank"));
            call.handle = json_integer<int>(c.at("handle"));
            call.scalars = c.value("scalars", std::vector<uint64_t>{});
            call.rings.heap = c.value("ring_heap", std::vector<uint64_t>{});
            call.rings.task_window = c.value("ring_task_window", std::vector<uint64_t>{});
            call.rings.dep_pool = c.value("ring_dep_pool", std::vector<uint64_t>{});
            call.trace = c.value("trace", std::string());
            for (const json& t : c.at("tensors")) {
                const std::string what =
                    "rank " + std::to_string(call.rank) + " tensor " + std::to_string(call.tensors.size());
                api::RankTensor rt;
                rt.tensor = tensor_of(t, what);
                rt.name = t.value("name", "");
                if (t.contains("gm")) {
                    rt.tensor.gm = json_integer<uint64_t>(t.at("gm"));
                    if (!rt.tensor.gm) throw api::BadInput(what + ": gm 0 is no allocation");
                } else {
                    rt.file = t.at("file").get<std::string>();
                    rt.offset = json_integer<uint64_t>(t.at("offset"));
                }
                call.tensors.push_back(std::move(rt));
            }
            calls.push_back(std::move(call));
        }
        const std::vector<api::RunResult> results =
            ranks.run(calls, request.value("prefetch", true), request.value("advise", false));
        json out = json::array();
        for (const api::RunResult& r : results) out.push_back(api::to_json(r, cfg));
        return {{"ok", true}, {"results", out}};
    }
    throw api::BadInput("unknown request '" + op + "'");
}

}  // namespace pfsim

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

json serve_ranks(api::RankSession& ranks, const Config& cfg, const Field& request) {
    const std::string op = request.at("op").get<std::string>();
    if (op == "register") return {{"ok", true}, {"handle", ranks.register_callable(callable_of(request))}};
    if (op == "alloc") {
        const auto a = ranks.alloc(request.at("rank").get<uint32_t>(), request.at("bytes").get<uint64_t>(),
                                   request.get<bool>("window", false));
        return {{"ok", true}, {"gm", a.gm}, {"pointer", a.pointer}};
    }
    if (op == "free") {
        ranks.free(request.at("rank").get<uint32_t>(), request.at("gm").get<uint64_t>());
        return {{"ok", true}};
    }
    if (op == "write" || op == "read") {
        const uint32_t rank = request.at("rank").get<uint32_t>();
        const uint64_t gm = request.at("gm").get<uint64_t>();
        const uint64_t bytes = request.at("bytes").get<uint64_t>();
        const std::string file = request.at("file").get<std::string>();
        const uint64_t offset = request.at("offset").get<uint64_t>();
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
            if (request.has(key)) {
                throw api::BadInput(std::string("run_ranks: '") + key +
                                    "' is not modelled on several dies yet (a one-die Worker's run takes it)");
            }
        }
        if (request.has("trace")) {
            throw api::BadInput("run_ranks: 'trace' names one file for several dies: give each call its own "
                                "(calls[i].trace, that rank's die)");
        }
        std::vector<api::RankCallRequest> calls;
        for (const Field& c : request.at("calls").items()) {
            api::RankCallRequest call;
            call.rank = c.at("rank").get<uint32_t>();
            call.handle = c.at("handle").get<int>();
            call.scalars = c.get<std::vector<uint64_t>>("scalars", {});
            call.rings.heap = c.get<std::vector<uint64_t>>("ring_heap", {});
            call.rings.task_window = c.get<std::vector<uint64_t>>("ring_task_window", {});
            call.rings.dep_pool = c.get<std::vector<uint64_t>>("ring_dep_pool", {});
            call.trace = c.get<std::string>("trace", "");
            for (const Field& t : c.at("tensors").items()) {
                const std::string what =
                    "rank " + std::to_string(call.rank) + " tensor " + std::to_string(call.tensors.size());
                api::RankTensor rt;
                rt.tensor = tensor_of(t, what);
                rt.name = t.get<std::string>("name", "");
                if (t.has("gm")) {
                    rt.tensor.gm = t.at("gm").get<uint64_t>();
                    if (!rt.tensor.gm) throw api::BadInput(what + ": gm 0 is no allocation");
                } else {
                    rt.file = t.at("file").get<std::string>();
                    rt.offset = t.at("offset").get<uint64_t>();
                }
                call.tensors.push_back(std::move(rt));
            }
            calls.push_back(std::move(call));
        }
        const std::vector<api::RunResult> results =
            ranks.run(calls, request.get<bool>("prefetch", true), request.get<bool>("advise", false));
        json out = json::array();
        for (const api::RunResult& r : results) out.push_back(api::to_json(r, cfg));
        return {{"ok", true}, {"results", out}};
    }
    throw api::BadInput("unknown request '" + op + "'");
}

}  // namespace pfsim

// pfsim device: one persistent simulated die serving a client (the Python
// package) over two pipes, one JSON request or reply per line. The protocol
// is in docs/python.md ("The device process"). Kernels' own output goes to
// stdout and stderr untouched: the protocol has its own descriptors.
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "session/device.h"
#include "session/failure.h"
#include "session/verdict.h"
#include "base/json_field.h"
#include "cli/commands.h"
#include "cli/device_requests.h"
#include "cli/options.h"

namespace pfsim {

using nlohmann::json;

namespace {

json failure(const std::string& kind, const std::string& message) {
    return {{"ok", false}, {"kind", kind}, {"message", message}};
}

}  // namespace

CallableSpec callable_of(const Field& request) {
    CallableSpec spec;
    const Field orch = request.at("orchestration");
    spec.orchestration = orch.at("source").get<std::string>();
    spec.function = orch.get<std::string>("function", spec.function);
    spec.config_function = orch.get<std::string>("config", spec.config_function);
    for (const Field& k : request.at("incores").items()) {
        IncoreSpec in;
        in.func_id = k.at("func_id").get<int32_t>();
        in.source = k.at("source").get<std::string>();
        const std::string core = k.at("core_type").get<std::string>();
        if (core != "aiv" && core != "aic") {
            throw api::BadInput("incore func_id " + std::to_string(in.func_id) + ": core_type must be aiv or aic, not '" +
                                core + "'");
        }
        in.vector = core == "aiv";
        spec.incores.push_back(in);
    }
    spec.include_dirs = request.get<std::vector<std::string>>("include_dirs", {});
    return spec;
}

CallTensor tensor_of(const Field& t, const std::string& what) {
    CallTensor ct;
    ct.dtype = parse_dtype(t.at("dtype").get<std::string>(), what);
    ct.shape = t.at("shape").get<std::vector<uint32_t>>();
    const uint64_t bytes = t.at("bytes").get<uint64_t>();
    uint64_t expected = rt::element_size(ct.dtype);
    for (uint32_t d : ct.shape) expected = d && expected > ~uint64_t{0} / d ? ~uint64_t{0} : expected * d;
    if (bytes != expected) {
        throw api::BadInput(what + ": bytes = " + std::to_string(bytes) + ", but its shape and dtype make " +
                            std::to_string(expected));
    }
    return ct;
}

namespace {

// A run tensor's "hash": true (its SHA-256 in the result, the default), false
// (none) or "digest" (base/digest.h's: cheaper, for judging off against on).
api::DeviceCall::Hash hash_of(const Field& t) {
    if (!t.has("hash")) return api::DeviceCall::Hash::Sha256;
    const Field h = t.at("hash");
    if (h.json().is_boolean()) return h.get<bool>() ? api::DeviceCall::Hash::Sha256 : api::DeviceCall::Hash::None;
    if (h.json() != "digest") throw FieldError(h.path() + ": expected true, false or \"digest\", got " + h.json().dump());
    return api::DeviceCall::Hash::Digest;
}

// {"op": "judge", "off": RESULT, "on": RESULT, "expected_gain_pct": [MIN, MAX]}: two
// results this device returned, prefetch off and on, judged as check judges a pair
// (session/verdict.h); each may be a level-3 run's waves instead (api::judged_run);
// the expectation is optional.
json judge_reply(const Field& request) {
    api::Expectation expected;
    if (request.has("expected_gain_pct")) {
        const Field e = request.at("expected_gain_pct");
        const std::vector<double> range = e.get<std::vector<double>>();
        if (range.size() != 2) throw api::BadInput("judge: expected_gain_pct is [MIN, MAX], not " + e.json().dump());
        expected = {range[0], range[1]};
    }
    // A result is the device's own document: one it cannot read is named by its side.
    auto side = [&](const char* key) {
        const Field result = request.at(key);
        try {
            return api::judged_run(result.json());
        } catch (const api::BadInput& e) {
            throw api::BadInput(result.path() + ": " + e.what());
        }
    };
    const api::RunResult off = side("off");
    const api::Verdict v = api::judge(off, side("on"), expected);
    return {{"ok", true}, {"verdict", api::to_json(v)}};
}

// {"op": "slots"}: the runtime slots (api::RuntimeSlots) and the heap ring's one bank,
// each record as the slot's retained GM holds it now.
json slots_reply(const api::DeviceSession& device) {
    const api::RuntimeSlots& slots = device.runtime_slots();
    json list = json::array();
    for (int i = 0; i < api::RuntimeSlots::kDepth; ++i) {
        std::vector<rt::ChipTensor> tensors;
        std::vector<uint64_t> scalars;
        slots.read_retained(i, tensors, scalars);
        json record = json::array();
        for (const rt::ChipTensor& t : tensors) {
            record.push_back({{"pointer", t.buffer.addr},
                              {"shape", std::vector<uint32_t>(t.shapes, t.shapes + t.ndims)}});
        }
        list.push_back({{"staging", slots.staging_address(i)}, {"retained", slots.retained_address(i)},
                        {"retained_bytes", slots.retained_bytes(i)}, {"generation", slots.generation(i)},
                        {"calls", slots.calls(i)}, {"tensors", record}, {"scalars", scalars}});
    }
    return {{"ok", true}, {"pipeline_depth", api::RuntimeSlots::kDepth}, {"slots", list},
            {"heap_banks", {device.heap_base()}}};
}

json serve(api::DeviceSession& device, const Config& cfg, const Field& request) {
    const std::string op = request.at("op").get<std::string>();
    if (op == "register") {
        const int handle = device.register_callable(callable_of(request));
        return {{"ok", true}, {"handle", handle}};
    }
    if (op == "prepare") {
        const int handle = device.prepare_callable(callable_of(request));
        return {{"ok", true}, {"handle", handle}, {"orchestration_loads", device.orchestration_loads()}};
    }
    if (op == "release") {
        device.release_callable(request.at("handle").get<int>());
        return {{"ok", true}};
    }
    if (op == "loads") return {{"ok", true}, {"orchestration_loads", device.orchestration_loads()}};
    if (op == "slots") return slots_reply(device);
    if (op == "run") {
        api::DeviceCall call;
        call.handle = request.at("handle").get<int>();
        call.prefetch = request.get<bool>("prefetch", true);
        call.trace = request.get<std::string>("trace", "");
        call.sanitize = request.get<bool>("sanitize", false);
        call.advise = request.get<bool>("advise", false);
        call.faults = request.get<std::vector<std::string>>("inject", {});
        call.scalars = request.get<std::vector<uint64_t>>("scalars", {});
        call.rings.heap = request.get<std::vector<uint64_t>>("ring_heap", {});
        call.rings.task_window = request.get<std::vector<uint64_t>>("ring_task_window", {});
        call.rings.dep_pool = request.get<std::vector<uint64_t>>("ring_dep_pool", {});
        call.aicpu_threads = request.get<uint32_t>("aicpu_thread_num", 0);
        call.transfer = request.get<std::string>("data", "");
        call.spans = request.get<bool>("spans", false);
        call.task_records = request.get<bool>("tasks", true);
        call.dump_args = request.get<int>("dump_args", 0);
        call.dump_dir = request.get<std::string>("dump_dir", "");
        call.scope_stats_dir = request.get<std::string>("scope_stats_dir", "");
        call.deps_json = request.get<std::string>("deps_json", "");
        call.runtime_slot = request.get<int>("runtime_slot", 0);
        if (request.has("generation")) call.lease_generation = request.at("generation").get<uint64_t>();
        if (call.dump_args < 0 || call.dump_args > 3) {
            throw api::BadInput("dump_args = " + std::to_string(call.dump_args) + ": simpler's levels are 0 to 3");
        }
        if (call.dump_args && call.dump_dir.empty()) throw api::BadInput("dump_args without a \"dump_dir\"");
        for (const Field& t : request.at("tensors").items()) {
            call.names.push_back(t.get<std::string>("name", ""));
            call.hashed.push_back(hash_of(t));
            call.offsets.push_back(t.at("offset").get<uint64_t>());
            call.sources.push_back(t.get<std::string>("file", ""));
            call.writes_source.push_back(t.get<bool>("shared", false));
            if (call.writes_source.back() && call.sources.back().empty()) {
                throw api::BadInput("tensor " + std::to_string(call.tensors.size()) + ": \"shared\" without its own \"file\"");
            }
            call.tensors.push_back(tensor_of(t, "tensor " + std::to_string(call.tensors.size())));
        }
        for (size_t i = 0; i < call.tensors.size() && call.transfer.empty(); ++i) {
            if (call.sources[i].empty()) throw api::BadInput("tensor " + std::to_string(i) + " without a \"data\" or \"file\"");
        }
        const api::RunResult r = device.run(call);  // the tensors' file holds what the run left
        return {{"ok", true}, {"result", api::to_json(r, cfg)}};
    }
    throw api::BadInput("unknown request '" + op + "'");
}

}  // namespace

int cmd_device(const std::vector<std::string>& args) {
    CommonOptions o =
        parse_options(args, {"--enable-sdma"}, {"--in-fd", "--out-fd", "--progress", "--workdir", "--ranks"});
    const int64_t progress_ms = progress_option_ms(o);
    if (!o.positional.empty()) throw UsageError("device takes no positional argument");
    auto fd_of = [&](const char* option, const char* fallback) {
        const std::string text = value_of(o, option, fallback);
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos || text.size() > 6) {
            throw UsageError(std::string("device: ") + option + " takes a file descriptor number, not '" + text + "'");
        }
        return std::stoi(text);
    };
    const int in_fd = fd_of("--in-fd", "0");
    const int out_fd = fd_of("--out-fd", "1");
    FILE* in = fdopen(in_fd, "r");
    FILE* out = fdopen(out_fd, "w");
    if (!in || !out) throw UsageError("device: --in-fd/--out-fd do not name open descriptors");
    // The client's end of the pipes is the device's life: when the client dies, so does the device,
    // removing the client's tensor folder (--workdir) on its way out.
    const std::string workdir = value_of(o, "--workdir", "");
    static char args_file[4096], folder[4096];
    std::snprintf(folder, sizeof folder, "%s", workdir.c_str());
    std::snprintf(args_file, sizeof args_file, "%s/args.bin", workdir.c_str());
    struct sigaction sa {};
    sa.sa_handler = [](int) {
        if (folder[0]) {
            unlink(args_file);
            rmdir(folder);
        }
        _exit(128 + SIGTERM);
    };
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, nullptr);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() == 1) return 1;  // the client died before the line above
    auto reply = [&](const json& j) {
        const std::string line = j.dump() + "\n";
        std::fwrite(line.data(), 1, line.size(), out);
        std::fflush(out);
    };
    std::unique_ptr<api::DeviceSession> device;
    std::unique_ptr<api::RankSession> ranks;  // --ranks N: N dies in one simulation (cli/device_ranks.cc)
    const std::string rank_count = value_of(o, "--ranks", "");
    Config cfg;
    try {
        cfg = resolve_config(o);
        if (rank_count.empty()) {
            device = std::make_unique<api::DeviceSession>(cfg, has_flag(o, "--enable-sdma"));
            device->report_progress(progress_ms);
        } else {
            ranks = make_rank_session(cfg, rank_count, has_flag(o, "--enable-sdma"));
            ranks->report_progress(progress_ms);
        }
    } catch (const ConfigError& e) {
        reply(failure("config", std::string("configuration error: ") + e.what()));
        return 2;
    } catch (const std::invalid_argument& e) {
        reply(failure("bad_input", e.what()));
        return 2;
    } catch (const std::runtime_error&) {
        const api::Failure f = api::failure_in_flight();
        if (!f.from_runtime) throw;
        reply(failure(f.kind, f.message));
        return 1;
    }
    json ranges = json::object();  // each parameter's plausible range: what the harness's --pfsim-uncertainty varies
    for (const auto& [key, range] : cfg.ranges()) ranges[key] = {range.low, range.high};
    if (ranks) {
        reply({{"ok", true}, {"ready", true}, {"ranks", ranks->ranks()}, {"sdma", ranks->sdma_enabled()},
               {"warmup", ranks->warmup()}, {"now_ns", ranks->now_ns()}, {"config", cfg.to_json()}, {"ranges", ranges}});
    } else {
        reply({{"ok", true}, {"ready", true}, {"sdma", device->sdma_enabled()}, {"warmup", device->warmup()},
               {"now_ns", device->now_ns()}, {"config", cfg.to_json()}, {"ranges", ranges}});
    }
    std::string line;
    for (int c; (c = std::fgetc(in)) != EOF;) {
        if (c != '\n') {
            line.push_back(static_cast<char>(c));
            continue;
        }
        json request;
        try {
            request = json::parse(line);
        } catch (const json::exception& e) {
            reply(failure("protocol", std::string("a request that is not JSON: ") + e.what()));
            line.clear();
            continue;
        }
        line.clear();
        if (!request.is_object()) {
            reply(failure("protocol", "a request that is not a JSON object: " + request.dump().substr(0, 80)));
            continue;
        }
        try {
            const Field fields(request, "request");
            const std::string op = fields.at("op").get<std::string>();
            if (op == "close") {
                reply({{"ok", true}});
                return 0;
            }
            if (op == "judge") {
                reply(judge_reply(fields));
                continue;
            }
            reply(ranks ? serve_ranks(*ranks, cfg, fields) : serve(*device, cfg, fields));
            if (ranks ? ranks->ended() : device->ended()) return 1;  // the run's reply names the fault; the die is not run on
        } catch (const FieldError& e) {
            reply(failure("protocol", e.what()));
        } catch (const json::exception& e) {  // not a request field's: a document inside one
            reply(failure("protocol", std::string("a request pfsim could not read: ") + e.what()));
        } catch (...) {
            const api::Failure f = api::failure_in_flight();
            reply(failure(f.kind, f.message));
        }
    }
    // The client closed the pipe: it is gone (its death may reach us as this end
    // of file before the SIGTERM above), so its tensor folder goes with us.
    if (folder[0]) {
        unlink(args_file);
        rmdir(folder);
    }
    return 0;
}

}  // namespace pfsim

#include "session/faults.h"

#include <algorithm>
#include <cstdio>
#include <set>

#include "session/run.h"
#include "base/json_integer.h"
#include "runtime/platform/device.h"
#include "runtime/platform/sim/sim_platform.h"

namespace pfsim::api {

namespace {

constexpr const char* kKnownFaults =
    "prefetch-corrupt, skip-wait, sdma-error[:K], sdma-stall, doorbell-lost[:K], core-fault[:CORE], reset-fail[:K]";

// K of "NAME:K": a positive count, 1 when absent.
uint64_t ordinal(const std::string& fault, const std::string& text) {
    if (text.empty() || text.size() > 12 || text.find_first_not_of("0123456789") != std::string::npos ||
        std::stoull(text) == 0) {
        throw BadInput("--inject " + fault + ": K counts requests or doorbells from 1, not '" + text + "'");
    }
    return std::stoull(text);
}

std::string hex(uint64_t v) {
    char b[24];
    std::snprintf(b, sizeof b, "0x%llx", static_cast<unsigned long long>(v));
    return b;
}

}  // namespace

FaultPlan parse_faults(const std::vector<std::string>& names) {
    FaultPlan plan;
    std::set<std::string> seen;
    for (const std::string& f : names) {
        const size_t colon = f.find(':');
        const std::string kind = f.substr(0, colon);
        const bool counted = kind == "sdma-error" || kind == "doorbell-lost" || kind == "reset-fail";
        if (colon != std::string::npos && !counted && kind != "core-fault") {
            throw BadInput("--inject " + f + ": only sdma-error, doorbell-lost and reset-fail take :K, core-fault :CORE");
        }
        if (!seen.insert(kind).second) throw BadInput("--inject " + kind + " is given twice");
        const uint64_t k = colon == std::string::npos || !counted ? 1 : ordinal(f, f.substr(colon + 1));
        if (kind == "prefetch-corrupt") {
            plan.prefetch_corrupt = true;
        } else if (kind == "skip-wait") {
            plan.skip_wait = true;
        } else if (kind == "sdma-error") {
            plan.sdma.error_at_request = k;
        } else if (kind == "sdma-stall") {
            plan.sdma.stall = true;
        } else if (kind == "doorbell-lost") {
            plan.sdma.lose_doorbell = k;
        } else if (kind == "core-fault") {
            plan.core_fault = true;
            if (colon != std::string::npos) plan.core_fault_core = f.substr(colon + 1);
            if (colon != std::string::npos && plan.core_fault_core.empty()) {
                throw BadInput("--inject core-fault: name a core after the colon (aiv0, aic3, ...)");
            }
        } else if (kind == "reset-fail") {
            if (k > 1000) throw BadInput("--inject " + f + ": at most 1000 failing resets");
            plan.failing_resets = static_cast<uint32_t>(k);
        } else {
            throw BadInput("unknown fault '" + f + "' for --inject (known: " + kKnownFaults + ")");
        }
    }
    if (plan.failing_resets && !plan.core_fault) {
        throw BadInput("--inject reset-fail: only with core-fault (a reset follows a fatal error)");
    }
    return plan;
}

FaultReport::FaultReport(SimPlatform& platform, const FaultPlan& plan) : platform_(platform), plan_(plan) {
    try {
        platform_.soc().sdma.inject(plan.sdma);
    } catch (const std::invalid_argument& e) {
        throw BadInput(std::string("--inject: ") + e.what());
    }
    platform_.faults().prefetch_corrupt = plan.prefetch_corrupt;
    if (plan.core_fault) {
        trap_ = std::make_shared<Trap>();
        std::vector<Core*> targets;
        for (const auto* group : {&platform_.vector_cores(), &platform_.cube_cores()}) {
            for (const auto& core : *group) {
                if (plan.core_fault_core.empty() || plan.core_fault_core == core->basename()) targets.push_back(core.get());
            }
        }
        if (targets.empty()) {
            auto range = [](const char* kind, size_t n) {
                return n ? std::string(kind) + "0.." + kind + std::to_string(n - 1) : std::string("no ") + kind;
            };
            throw BadInput("--inject core-fault:" + plan.core_fault_core + ": no such core (the die has " +
                           range("aiv", platform_.vector_cores().size()) + " and " +
                           range("aic", platform_.cube_cores().size()) + ")");
        }
        for (Core* core : targets) {
            core->set_trap([trap = trap_, core, platform = &platform_]() -> std::string {
                if (trap->fired) return "";
                trap->fired = true;
                trap->core = core->name();
                trap->at_ns = static_cast<double>(platform->now_ps()) / 1e3;  // when the kernel was started
                return "core trap (--inject core-fault)";
            });
        }
    }
    platform_.kernel_side().add_observer(this);
}

FaultReport::~FaultReport() {
    for (const auto* group : {&platform_.vector_cores(), &platform_.cube_cores()}) {
        for (const auto& core : *group) core->set_trap(nullptr);
    }
    platform_.kernel_side().remove_observer(this);
    platform_.soc().sdma.inject({});
    platform_.faults().prefetch_corrupt = false;
}

void FaultReport::posted(const rt::PrefetchAsyncContext& ctx, uint64_t post_id, uint64_t gm, uint64_t bytes,
                         uint64_t since_ps) {
    const rt::AsyncSession& s = ctx.session;
    const uint64_t request = platform_.kernel_side().options.request_bytes;
    const auto slots = static_cast<uint32_t>((bytes + request - 1) / request + 1);  // the data requests and the flag copy
    posts_.push_back({rt::current_device().core_id(), s.group, post_id, gm, bytes, s.sq_base,
                      (s.tail + s.depth - slots) % s.depth, slots, s.depth, since_ps});
}

nlohmann::json FaultReport::finish() const {
    nlohmann::json out = nlohmann::json::array();
    const SdmaEngine& engine = platform_.soc().sdma;
    for (const SdmaFaultEvent& e : engine.fault_events()) {
        nlohmann::json f = {{"kind", e.kind}, {"channel", e.channel}, {"at_ns", static_cast<double>(e.at) / 1e3}};
        const std::string kind = e.kind;
        // The ring slot the fault hit: the request refused, the last one a lost doorbell covered.
        int64_t slot = -1;
        if (kind == "sdma-error") {
            f["request"] = e.ordinal;
            f["error"] = sdma_error_name(SdmaError::InjectedFault);
            f["error_code"] = static_cast<uint32_t>(SdmaError::InjectedFault);
            f["opcode"] = e.request.opcode;
            f["src"] = hex(e.request.src);
            f["length"] = e.request.length;
            slot = e.ring_slot;
        } else if (kind == "doorbell-lost") {
            f["doorbell"] = e.ordinal;
            f["tail"] = e.ring_slot;
        } else {
            f["unfetched"] = engine.queue_depth(e.channel);
        }
        const Post* hit = nullptr;
        for (const Post& p : posts_) {
            if (p.ring_base != e.ring_base || p.posted_ps > e.at || p.depth == 0) continue;
            const uint32_t want = slot >= 0 ? static_cast<uint32_t>(slot) : (e.ring_slot + p.depth - 1) % p.depth;
            if ((want + p.depth - p.first_slot) % p.depth < p.slots) hit = &p;
        }
        if (hit) {
            f["post"] = {{"core", hit->core}, {"group", hit->group}, {"id", hit->id}, {"gm", hex(hit->gm)},
                         {"bytes", hit->bytes}};
        }
        out.push_back(f);
    }
    if (trap_) {
        nlohmann::json f = {{"kind", "core-fault"}, {"trapped", trap_->fired}};
        if (trap_->fired) {
            f["core"] = trap_->core;
            f["at_ns"] = trap_->at_ns;
        } else {
            f["core"] = plan_.core_fault_core.empty() ? "any" : plan_.core_fault_core;
        }
        out.push_back(f);
    }
    return out;
}

std::vector<std::string> FaultReport::unfired() const {
    std::vector<std::string> out;
    auto fired = [&](const std::string& kind) {
        for (const SdmaFaultEvent& e : platform_.soc().sdma.fault_events()) {
            if (kind == e.kind) return true;
        }
        return false;
    };
    if (plan_.sdma.error_at_request && !fired("sdma-error")) {
        out.push_back("--inject sdma-error:" + std::to_string(plan_.sdma.error_at_request) +
                      ": did not fire (the run's SDMA engine took up fewer requests)");
    }
    if (plan_.sdma.lose_doorbell && !fired("doorbell-lost")) {
        out.push_back("--inject doorbell-lost:" + std::to_string(plan_.sdma.lose_doorbell) +
                      ": did not fire (the run rang fewer doorbells)");
    }
    if (plan_.sdma.stall && !fired("sdma-stall")) out.push_back("--inject sdma-stall: did not fire (no doorbell rang)");
    if (plan_.prefetch_corrupt && platform_.soc().l2.corruption_pending()) {
        out.push_back("--inject prefetch-corrupt: did not fire (no prefetch filled a line)");
    }
    if (trap_ && !trap_->fired) {
        out.push_back("--inject core-fault: no kernel started on " +
                      (plan_.core_fault_core.empty() ? std::string("any core") : plan_.core_fault_core) + ": nothing trapped");
    }
    return out;
}

std::vector<std::string> FaultReport::text(const nlohmann::json& faults) {
    std::vector<std::string> lines;
    for (const nlohmann::json& f : faults) {
        const std::string kind = f.value("kind", "");
        if (kind == "core-fault") {
            char at[48];
            std::snprintf(at, sizeof at, " at %.3f us", f.value("at_ns", 0.0) / 1e3);
            lines.push_back(f.value("trapped", false)
                                ? "core-fault: " + f.value("core", std::string()) + " trapped" + at
                                : "core-fault: no kernel started on " + f.value("core", std::string()) + ": nothing trapped");
            continue;
        }
        std::string line = kind + ": SDMA channel " + std::to_string(json_integer_or<unsigned>(f, "channel", 0));
        if (kind == "sdma-error") {
            line += " stopped with " + f.value("error", std::string()) + " (code " +
                    std::to_string(json_integer_or<unsigned>(f, "error_code", 0)) + ") taking up request " +
                    std::to_string(json_integer_or<uint64_t>(f, "request", 0)) + " (opcode " +
                    std::to_string(json_integer_or<unsigned>(f, "opcode", 0)) + ", " + std::to_string(json_integer_or<unsigned>(f, "length", 0)) + " B from " +
                    f.value("src", std::string()) + ")";
        } else if (kind == "doorbell-lost") {
            line += " lost doorbell " + std::to_string(json_integer_or<uint64_t>(f, "doorbell", 0)) + " (tail " +
                    std::to_string(json_integer_or<unsigned>(f, "tail", 0)) + ")";
        } else {
            line += " fetched nothing: " + std::to_string(json_integer_or<unsigned>(f, "unfetched", 0)) + " requests left in its ring";
        }
        char at[48];
        std::snprintf(at, sizeof at, " at %.3f us", f.value("at_ns", 0.0) / 1e3);
        line += at;
        if (f.contains("post")) {
            const nlohmann::json& p = f["post"];
            line += "; post " + std::to_string(json_integer_or<uint64_t>(p, "id", 0)) + " of core " +
                    std::to_string(json_integer_or<unsigned>(p, "core", 0)) + " (channel group " + std::to_string(json_integer_or<unsigned>(p, "group", 0)) +
                    ", " + std::to_string(json_integer_or<uint64_t>(p, "bytes", 0)) + " B at " + p.value("gm", std::string()) + ")";
        }
        lines.push_back(line);
    }
    return lines;
}

}  // namespace pfsim::api

#include "session/run_spec.h"

#include <algorithm>

#include "base/json_field.h"
#include "session/case_file.h"

namespace pfsim::api {

bool RunRequest::is_case() const { return is_case_file(target); }

Config ConfigChoice::resolve() const {
    Config cfg = Config::from_preset(preset);
    for (const std::string& f : files) cfg.load_file(f);
    for (const std::string& s : sets) cfg.set(s);
    cfg.validate();
    return cfg;
}

std::string RunSpec::describe() const {
    std::string s;
    if (is_replay) {
        s = "replay " + replay.file;
    } else {
        s = "run " + run.target + " --prefetch " + (run.prefetch ? "on" : "off");
        for (const std::string& a : run.kernel_args) s += " --arg " + a;
        if (!run.enable_sdma) s += " --no-sdma";
        if (!run.warmup) s += " --no-warmup";
        for (const std::string& f : run.faults) s += " --inject " + f;
        if (run.sanitize) s += " --sanitize";
        if (run.advise) s += " --advise";
        for (const std::string& d : run.dropped_sites) s += " --drop-prefetch " + d;
        for (const std::string& d : run.free_sites) s += " --free-prefetch " + d;
        for (const std::string& d : run.warm_load_sites) s += " --warm-loads " + d;
        for (const std::string& d : run.around_load_sites) s += " --bypass-loads " + d;
    }
    if (config.preset != Config::kDefaultPreset) s += " --preset " + config.preset;
    for (const std::string& f : config.files) s += " --config " + f;
    for (const std::string& k : config.sets) s += " --set " + k;
    return s;
}

bool RunSpec::operator==(const RunSpec& o) const { return to_json(*this) == to_json(o); }

nlohmann::json to_json(const RunSpec& spec) {
    nlohmann::json j = {{"config", {{"preset", spec.config.preset}, {"files", spec.config.files}, {"sets", spec.config.sets}}}};
    if (spec.is_replay) {
        const ReplayRequest& r = spec.replay;
        j["replay"] = {{"file", r.file}, {"label", r.label}, {"verify", r.verify}, {"progress", r.progress}, {"trace", r.trace}};
        return j;
    }
    const RunRequest& r = spec.run;
    j["run"] = {{"target", r.target},
                {"kernel_args", r.kernel_args},
                {"prefetch", r.prefetch},
                {"enable_sdma", r.enable_sdma},
                {"warmup", r.warmup},
                {"faults", r.faults},
                {"trace", r.trace},
                {"waves", r.waves},
                {"outputs_dir", r.outputs_dir},
                {"sanitize", r.sanitize},
                {"suppressions", r.suppressions},
                {"advise", r.advise},
                {"dropped_sites", r.dropped_sites},
                {"free_sites", r.free_sites},
                {"warm_load_sites", r.warm_load_sites},
                {"around_load_sites", r.around_load_sites},
                {"progress_ms", r.progress_ms},
                {"task_records", r.task_records}};
    return j;
}

namespace {

// `o`, named `where`, to read its members from (Field::get: FieldError for a
// missing or mistyped one); FieldError unless it is an object, BadInput when it
// holds a key not in `known`.
Field only_known(const nlohmann::json& o, const std::string& where, const std::vector<std::string>& known) {
    const Field field(o, where);
    if (!o.is_object()) field.fail("an object");
    for (const auto& [key, value] : o.items()) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            throw BadInput("run spec: " + where + "." + key + ": unknown field");
        }
    }
    return field;
}

RunSpec read_spec(const nlohmann::json& j) {
    only_known(j, "spec", {"config", "run", "replay"});
    RunSpec spec;
    if (j.contains("config")) {
        const Field config = only_known(j["config"], "config", {"preset", "files", "sets"});
        spec.config.preset = config.get("preset", spec.config.preset);
        spec.config.files = config.get("files", spec.config.files);
        spec.config.sets = config.get("sets", spec.config.sets);
    }
    if (j.contains("replay") == j.contains("run")) throw BadInput("run spec: needs exactly one of run and replay");
    if (j.contains("replay")) {
        spec.is_replay = true;
        const Field r = only_known(j["replay"], "replay", {"file", "label", "verify", "progress", "trace"});
        spec.replay.file = r.at("file").get<std::string>();
        spec.replay.label = r.get("label", spec.replay.file);
        spec.replay.verify = r.get("verify", spec.replay.verify);
        spec.replay.progress = r.get("progress", spec.replay.progress);
        spec.replay.trace = r.get("trace", spec.replay.trace);
        return spec;
    }
    const Field r = only_known(j["run"], "run",
                               {"target", "kernel_args", "prefetch", "enable_sdma", "warmup", "faults", "trace", "waves",
                                "outputs_dir", "sanitize", "suppressions", "advise", "dropped_sites", "free_sites",
                                "warm_load_sites", "around_load_sites", "progress_ms", "task_records"});
    RunRequest& q = spec.run;
    q.target = r.at("target").get<std::string>();
    q.kernel_args = r.get("kernel_args", q.kernel_args);
    q.prefetch = r.get("prefetch", q.prefetch);
    q.enable_sdma = r.get("enable_sdma", q.enable_sdma);
    q.warmup = r.get("warmup", q.warmup);
    q.faults = r.get("faults", q.faults);
    q.trace = r.get("trace", q.trace);
    q.waves = r.get("waves", q.waves);
    q.outputs_dir = r.get("outputs_dir", q.outputs_dir);
    q.sanitize = r.get("sanitize", q.sanitize);
    q.suppressions = r.get("suppressions", q.suppressions);
    q.advise = r.get("advise", q.advise);
    q.dropped_sites = r.get("dropped_sites", q.dropped_sites);
    q.free_sites = r.get("free_sites", q.free_sites);
    q.warm_load_sites = r.get("warm_load_sites", q.warm_load_sites);
    q.around_load_sites = r.get("around_load_sites", q.around_load_sites);
    q.progress_ms = r.get("progress_ms", q.progress_ms);
    q.task_records = r.get("task_records", q.task_records);
    return spec;
}

}  // namespace

RunSpec run_spec_from_json(const nlohmann::json& j) {
    try {
        return read_spec(j);
    } catch (const FieldError& e) {
        throw BadInput(std::string("run spec: ") + e.what());
    }
}

}  // namespace pfsim::api

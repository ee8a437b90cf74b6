#include "session/run_spec.h"

#include <algorithm>

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

// Reads field `key` of object `o` (named `where`) into `out` when it is there
// (else `out` keeps its default; BadInput when `required`), BadInput when it
// is of another type.
template <typename T>
void read_field(const nlohmann::json& o, const std::string& where, const char* key, T* out, bool required = false) {
    if (!o.contains(key)) {
        if (required) throw BadInput("run spec: " + where + "." + key + ": missing");
        return;
    }
    try {
        *out = o.at(key).get<T>();
    } catch (const nlohmann::json::exception&) {
        throw BadInput("run spec: " + where + "." + key + ": of the wrong type (" + o.at(key).dump().substr(0, 60) + ")");
    }
}

// BadInput unless `o` is an object whose every key is one of `known`.
void only_known(const nlohmann::json& o, const std::string& where, const std::vector<std::string>& known) {
    if (!o.is_object()) throw BadInput("run spec: " + where + ": not a JSON object");
    for (const auto& [key, value] : o.items()) {
        if (std::find(known.begin(), known.end(), key) == known.end()) {
            throw BadInput("run spec: " + where + "." + key + ": unknown field");
        }
    }
}

}  // namespace

RunSpec run_spec_from_json(const nlohmann::json& j) {
    only_known(j, "spec", {"config", "run", "replay"});
    RunSpec spec;
    if (j.contains("config")) {
        const nlohmann::json& config = j["config"];
        only_known(config, "config", {"preset", "files", "sets"});
        read_field(config, "config", "preset", &spec.config.preset);
        read_field(config, "config", "files", &spec.config.files);
        read_field(config, "config", "sets", &spec.config.sets);
    }
    if (j.contains("replay") == j.contains("run")) throw BadInput("run spec: needs exactly one of run and replay");
    if (j.contains("replay")) {
        spec.is_replay = true;
        const nlohmann::json& r = j["replay"];
        only_known(r, "replay", {"file", "label", "verify", "progress", "trace"});
        read_field(r, "replay", "file", &spec.replay.file, true);
        spec.replay.label = spec.replay.file;
        read_field(r, "replay", "label", &spec.replay.label);
        read_field(r, "replay", "verify", &spec.replay.verify);
        read_field(r, "replay", "progress", &spec.replay.progress);
        read_field(r, "replay", "trace", &spec.replay.trace);
        return spec;
    }
    const nlohmann::json& r = j["run"];
    only_known(r, "run", {"target", "kernel_args", "prefetch", "enable_sdma", "warmup", "faults", "trace", "waves",
                          "outputs_dir", "sanitize", "suppressions", "advise", "dropped_sites", "free_sites",
                          "warm_load_sites", "around_load_sites", "progress_ms", "task_records"});
    RunRequest& q = spec.run;
    read_field(r, "run", "target", &q.target, true);
    read_field(r, "run", "kernel_args", &q.kernel_args);
    read_field(r, "run", "prefetch", &q.prefetch);
    read_field(r, "run", "enable_sdma", &q.enable_sdma);
    read_field(r, "run", "warmup", &q.warmup);
    read_field(r, "run", "faults", &q.faults);
    read_field(r, "run", "trace", &q.trace);
    read_field(r, "run", "waves", &q.waves);
    read_field(r, "run", "outputs_dir", &q.outputs_dir);
    read_field(r, "run", "sanitize", &q.sanitize);
    read_field(r, "run", "suppressions", &q.suppressions);
    read_field(r, "run", "advise", &q.advise);
    read_field(r, "run", "dropped_sites", &q.dropped_sites);
    read_field(r, "run", "free_sites", &q.free_sites);
    read_field(r, "run", "warm_load_sites", &q.warm_load_sites);
    read_field(r, "run", "around_load_sites", &q.around_load_sites);
    read_field(r, "run", "progress_ms", &q.progress_ms);
    read_field(r, "run", "task_records", &q.task_records);
    return spec;
}

}  // namespace pfsim::api

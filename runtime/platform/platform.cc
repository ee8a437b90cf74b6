#include "runtime/platform/platform.h"

namespace pfsim::rt {

std::vector<CorePlace> core_places(const LaunchSpec& spec) {
    std::vector<CorePlace> places;
    for (uint32_t b = 0; b < spec.block_dim; ++b) {
        if (spec.cube) places.push_back({false, b, 0});
        for (uint32_t v = 0; v < spec.vector_per_block; ++v) places.push_back({true, b, v});
    }
    return places;
}

bool LaunchResult::ok() const { return first_error().empty(); }

std::string LaunchResult::first_error() const {
    for (const CoreTiming& c : cores) {
        if (!c.error.empty()) return c.error;
    }
    return "";
}

}  // namespace pfsim::rt

namespace pfsim::rt {

const char* task_shape_name(TaskShape shape) {
    switch (shape) {
        case TaskShape::Aiv: return "aiv";
        case TaskShape::Aic: return "aic";
        case TaskShape::Mix: return "mix";
        case TaskShape::Dummy: return "dummy";
    }
    return "?";
}

bool GraphResult::ok() const { return first_error().empty(); }

std::string GraphResult::first_error() const {
    if (!dropped_error.empty()) return dropped_error;
    for (const TaskRun& t : tasks) {
        if (!t.error.empty()) return t.error;
    }
    return !error.empty() ? error : stuck;
}

}  // namespace pfsim::rt

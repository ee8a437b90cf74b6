#pragma once
// Integers read from JSON that pfsim did not necessarily write (a summary, a
// trace, a batch file, a device request). nlohmann's get<T>() casts a float or
// an out-of-range integer to T unchecked — undefined behaviour for a float
// beyond T's range. These accept an integer, or an integral float, that T
// holds, and throw nlohmann::json::type_error (302) for anything else, which
// every reader already turns into a message naming the file.
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

namespace pfsim {

template <class T>
T json_integer(const nlohmann::json& v) {
    static_assert(std::is_integral_v<T> && !std::is_same_v<T, bool>);
    using Limits = std::numeric_limits<T>;
    if (v.is_number_unsigned()) {
        const uint64_t u = v.get<uint64_t>();
        if (u <= static_cast<uint64_t>(Limits::max())) return static_cast<T>(u);
    } else if (v.is_number_integer()) {
        const int64_t i = v.get<int64_t>();
        if (i >= static_cast<int64_t>(Limits::min()) && (i < 0 || static_cast<uint64_t>(i) <= static_cast<uint64_t>(Limits::max()))) {
            return static_cast<T>(i);
        }
    } else if (v.is_number_float()) {
        const double d = v.get<double>();
        // 2^digits is exact in a double; Limits::max() may not be.
        if (std::trunc(d) == d && d >= static_cast<double>(Limits::min()) && d < std::ldexp(1.0, Limits::digits)) {
            return static_cast<T>(d);
        }
    }
    throw nlohmann::json::type_error::create(
        302, "expected an integer of " + std::to_string(Limits::digits + Limits::is_signed) + " bits" +
                 (Limits::is_signed ? "" : " without sign") + ", got " + v.dump(),
        &v);
}

// object[key] as json_integer<T>, or `fallback` when the key is absent (or
// `object` is not an object).
template <class T>
T json_integer_or(const nlohmann::json& object, const char* key, T fallback) {
    if (!object.is_object()) return fallback;
    const auto it = object.find(key);
    return it == object.end() ? fallback : json_integer<T>(*it);
}

// An array of json_integer<T>; type_error for anything else.
template <class T>
std::vector<T> json_integers(const nlohmann::json& array) {
    if (!array.is_array()) {
        throw nlohmann::json::type_error::create(302, std::string("expected an array, got ") + array.type_name(), &array);
    }
    std::vector<T> out;
    out.reserve(array.size());
    for (const nlohmann::json& v : array) out.push_back(json_integer<T>(v));
    return out;
}

}  // namespace pfsim

#pragma once
// A value in a JSON document pfsim did not write (a `pfsim device` request, a run
// spec read by `pfsim run-request`), and its path there, "request.tensors[2].offset". Every read through it names that
// path when the value is missing or of the wrong type, in one wording:
//   request.tasks: expected a boolean, got a number
//   request.handle: expected an integer of 32 bits, got 2.5
//   request.tensors[0].shape: missing
// so a reader states what it reads and never words an error of its own for it.
#include <cstddef>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/json_integer.h"

namespace pfsim {

// A missing or mistyped value, its message starting with its path.
class FieldError : public std::invalid_argument {
public:
    using std::invalid_argument::invalid_argument;
};

class Field {
public:
    // `value` must outlive the Field and those read from it.
    Field(const nlohmann::json& value, std::string path) : value_(value), path_(std::move(path)) {}

    const nlohmann::json& json() const { return value_; }
    const std::string& path() const { return path_; }

    // Whether this is an object holding `key` (null or not).
    bool has(const std::string& key) const { return value_.is_object() && value_.contains(key); }
    // Its member `key`; FieldError when this is not an object or lacks it.
    Field at(const std::string& key) const;
    // Its elements; FieldError when this is not an array.
    std::vector<Field> items() const;

    // The value as T: bool, std::string, double (any number), an integer type (an
    // integer, or an integral float, that T holds: json_integer's rule), or a
    // std::vector of these (each element read at "PATH[i]"). FieldError otherwise.
    template <class T>
    T get() const;
    // Member `key` as T, or `fallback` when this object does not hold it.
    template <class T>
    T get(const std::string& key, T fallback) const {
        return has(key) ? at(key).get<T>() : fallback;
    }

    // Throws "PATH: expected EXPECTED, got WHAT-IT-IS".
    [[noreturn]] void fail(const std::string& expected) const;

private:
    template <class T>
    struct is_vector : std::false_type {};
    template <class T>
    struct is_vector<std::vector<T>> : std::true_type {};

    const nlohmann::json& value_;
    std::string path_;
};

template <class T>
T Field::get() const {
    if constexpr (std::is_same_v<T, bool>) {
        if (!value_.is_boolean()) fail("a boolean");
        return value_.get<bool>();
    } else if constexpr (std::is_same_v<T, std::string>) {
        if (!value_.is_string()) fail("a string");
        return value_.get<std::string>();
    } else if constexpr (std::is_same_v<T, double>) {
        if (!value_.is_number()) fail("a number");
        return value_.get<double>();
    } else if constexpr (std::is_integral_v<T>) {
        try {
            return json_integer<T>(value_);
        } catch (const nlohmann::json::type_error&) {
            using Limits = std::numeric_limits<T>;
            fail("an integer of " + std::to_string(Limits::digits + Limits::is_signed) + " bits" +
                 (Limits::is_signed ? "" : " without sign"));
        }
    } else {
        static_assert(is_vector<T>::value, "Field::get reads bool, std::string, double, integers and vectors of them");
        T out;
        for (const Field& item : items()) out.push_back(item.get<typename T::value_type>());
        return out;
    }
}

}  // namespace pfsim

#include "base/json_field.h"

namespace pfsim {

Field Field::at(const std::string& key) const {
    if (!value_.is_object()) fail("an object");
    const auto it = value_.find(key);
    if (it == value_.end()) throw FieldError(path_ + "." + key + ": missing");
    return Field(*it, path_ + "." + key);
}

std::vector<Field> Field::items() const {
    if (!value_.is_array()) fail("an array");
    std::vector<Field> out;
    out.reserve(value_.size());
    for (size_t i = 0; i < value_.size(); ++i) out.emplace_back(value_[i], path_ + "[" + std::to_string(i) + "]");
    return out;
}

void Field::fail(const std::string& expected) const {
    std::string got;
    switch (value_.type()) {
        case nlohmann::json::value_t::null: got = "null"; break;
        case nlohmann::json::value_t::boolean: got = "a boolean"; break;
        case nlohmann::json::value_t::string: got = "a string"; break;
        case nlohmann::json::value_t::array: got = "an array"; break;
        case nlohmann::json::value_t::object: got = "an object"; break;
        default:  // a number: which one, when an integer was expected (its kind or range is wrong)
            got = !value_.is_number() ? value_.type_name() : expected.rfind("an integer", 0) == 0 ? value_.dump() : "a number";
    }
    throw FieldError(path_ + ": expected " + expected + ", got " + got);
}

}  // namespace pfsim

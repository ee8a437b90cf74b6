// Field reads a value as its type or names the value's path: one wording for
// every reader of a device request (cli/device_requests.h).
#include "base/json_field.h"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

namespace pfsim {
namespace {

using nlohmann::json;

// What reading `read` from the document `text` (at "request") throws; "" when it reads.
template <class Read>
std::string error_of(const std::string& text, Read read) {
    const json doc = json::parse(text);
    try {
        read(Field(doc, "request"));
    } catch (const FieldError& e) {
        return e.what();
    }
    return "";
}

TEST(JsonField, ReadsEachTypeItIsAskedFor) {
    const json doc = json::parse(R"({"on": true, "name": "x", "n": 3.0, "big": 18446744073709551615,
                                     "gain": 2.5, "list": [[1, 2], [3]], "nested": {"deep": [0, -1]}})");
    const Field r(doc, "request");
    EXPECT_TRUE(r.at("on").get<bool>());
    EXPECT_EQ(r.at("name").get<std::string>(), "x");
    EXPECT_EQ(r.at("n").get<int>(), 3);  // an integral float, as json_integer takes it
    EXPECT_EQ(r.at("big").get<uint64_t>(), UINT64_MAX);
    EXPECT_EQ(r.at("gain").get<double>(), 2.5);
    EXPECT_EQ(r.at("list").get<std::vector<std::vector<uint32_t>>>(), (std::vector<std::vector<uint32_t>>{{1, 2}, {3}}));
    EXPECT_EQ(r.at("nested").at("deep").get<std::vector<int>>(), (std::vector<int>{0, -1}));
    EXPECT_EQ(r.get<bool>("absent", true), true);  // the fallback of a key it does not hold
    EXPECT_EQ(r.at("nested").at("deep").items()[1].path(), "request.nested.deep[1]");
}

TEST(JsonField, NamesThePathOfAMistypedOrMissingValue) {
    EXPECT_EQ(error_of(R"({"tasks": 5})", [](const Field& r) { r.get<bool>("tasks", true); }),
              "request.tasks: expected a boolean, got a number");
    EXPECT_EQ(error_of(R"({"spans": "x"})", [](const Field& r) { r.at("spans").get<bool>(); }),
              "request.spans: expected a boolean, got a string");
    EXPECT_EQ(error_of(R"({"t": [{"shape": [4, null]}]})",
                       [](const Field& r) { r.at("t").items()[0].at("shape").get<std::vector<uint32_t>>(); }),
              "request.t[0].shape[1]: expected an integer of 32 bits without sign, got null");
    EXPECT_EQ(error_of(R"({"h": -1})", [](const Field& r) { r.at("h").get<uint32_t>(); }),
              "request.h: expected an integer of 32 bits without sign, got -1");
    EXPECT_EQ(error_of(R"({"h": 2.5})", [](const Field& r) { r.at("h").get<int>(); }),
              "request.h: expected an integer of 32 bits, got 2.5");
    EXPECT_EQ(error_of(R"({"g": [1, "2"]})", [](const Field& r) { r.at("g").get<std::vector<double>>(); }),
              "request.g[1]: expected a number, got a string");
    EXPECT_EQ(error_of(R"({"o": []})", [](const Field& r) { r.at("o").at("source"); }),
              "request.o: expected an object, got an array");
    EXPECT_EQ(error_of(R"({"o": {}})", [](const Field& r) { r.at("o").items(); }),
              "request.o: expected an array, got an object");
    EXPECT_EQ(error_of(R"({})", [](const Field& r) { r.at("handle"); }), "request.handle: missing");
    // The control: the same reads of well-typed values throw nothing.
    EXPECT_EQ(error_of(R"({"tasks": false, "h": 7, "g": [1, 2], "o": {"source": "s"}})",
                       [](const Field& r) {
                           r.get<bool>("tasks", true);
                           r.at("h").get<uint32_t>();
                           r.at("g").get<std::vector<double>>();
                           r.at("o").at("source").get<std::string>();
                       }),
              "");
}

}  // namespace
}  // namespace pfsim

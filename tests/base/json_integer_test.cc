// json_integer accepts exactly the values its type holds; everything else is
// nlohmann::json::type_error, never a cast (fuzz/regressions/document_fuzz).
#include "base/json_integer.h"

#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace pfsim {
namespace {

using nlohmann::json;

TEST(JsonInteger, AcceptsEveryValueOfItsTypeUpToTheLimits) {
    EXPECT_EQ(json_integer<uint32_t>(json::parse("4294967295")), 4294967295u);
    EXPECT_EQ(json_integer<uint32_t>(json::parse("0")), 0u);
    EXPECT_EQ(json_integer<int32_t>(json::parse("-2147483648")), std::numeric_limits<int32_t>::min());
    EXPECT_EQ(json_integer<int32_t>(json::parse("2147483647")), std::numeric_limits<int32_t>::max());
    EXPECT_EQ(json_integer<uint64_t>(json::parse("18446744073709551615")), std::numeric_limits<uint64_t>::max());
    EXPECT_EQ(json_integer<int64_t>(json::parse("-9223372036854775808")), std::numeric_limits<int64_t>::min());
    // An integral float is that integer (a file written by another tool may say 3.0).
    EXPECT_EQ(json_integer<int>(json::parse("3.0")), 3);
    EXPECT_EQ(json_integer<int>(json::parse("-7e0")), -7);
    EXPECT_EQ(json_integer<int64_t>(json(-std::ldexp(1.0, 63))), std::numeric_limits<int64_t>::min());
    EXPECT_EQ(json_integer<uint64_t>(json(std::ldexp(1.0, 63))), uint64_t{1} << 63);
}

TEST(JsonInteger, RefusesWhatItsTypeDoesNotHold) {
    const char* for_uint32[] = {"4294967296", "-1", "0.5", "1e300", "-1e300", "true", "\"3\"", "null", "[1]", "{}"};
    for (const char* text : for_uint32) {
        EXPECT_THROW(json_integer<uint32_t>(json::parse(text)), json::type_error) << text;
    }
    const char* for_int32[] = {"2147483648", "-2147483649", "2147483648.0", "1e10", "18446744073709551615"};
    for (const char* text : for_int32) {
        EXPECT_THROW(json_integer<int32_t>(json::parse(text)), json::type_error) << text;
    }
    // 2^64 and 2^63 are the first doubles beyond uint64_t and int64_t.
    EXPECT_THROW(json_integer<uint64_t>(json(std::ldexp(1.0, 64))), json::type_error);
    EXPECT_THROW(json_integer<int64_t>(json(std::ldexp(1.0, 63))), json::type_error);
    EXPECT_THROW(json_integer<int64_t>(json(std::nan(""))), json::type_error);
    EXPECT_THROW(json_integer<int64_t>(json(std::numeric_limits<double>::infinity())), json::type_error);
    try {
        json_integer<uint32_t>(json::parse("1e300"));
        FAIL();
    } catch (const json::type_error& e) {
        EXPECT_NE(std::string(e.what()).find("expected an integer of 32 bits without sign, got 1e+300"), std::string::npos)
            << e.what();
    }
}

TEST(JsonInteger, OrFallsBackOnlyWhenTheKeyIsAbsent) {
    EXPECT_EQ(json_integer_or<int>(json::parse(R"({"a": 4})"), "a", 9), 4);
    EXPECT_EQ(json_integer_or<int>(json::parse(R"({"b": 4})"), "a", 9), 9);
    EXPECT_EQ(json_integer_or<int>(json::parse("[1, 2]"), "a", 9), 9);
    EXPECT_THROW(json_integer_or<int>(json::parse(R"({"a": 1e300})"), "a", 9), json::type_error);
    EXPECT_THROW(json_integer_or<int>(json::parse(R"({"a": null})"), "a", 9), json::type_error);
}

TEST(JsonInteger, ArraysAreCheckedElementByElement) {
    EXPECT_EQ(json_integers<uint32_t>(json::parse("[1, 2, 3.0]")), (std::vector<uint32_t>{1, 2, 3}));
    EXPECT_TRUE(json_integers<uint32_t>(json::parse("[]")).empty());
    EXPECT_THROW(json_integers<uint32_t>(json::parse("[1, -2]")), json::type_error);
    EXPECT_THROW(json_integers<uint32_t>(json::parse("{\"a\": 1}")), json::type_error);
    EXPECT_THROW(json_integers<uint32_t>(json::parse("7")), json::type_error);
}

}  // namespace
}  // namespace pfsim

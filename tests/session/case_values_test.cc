// A case's generated tensors (init = "fill", "arange", "random") against
// their definitions in docs/cases.md, element by element, at sizes that make
// make_values fill them in several chunks on several threads.
#include <cmath>
#include <vector>

#include <gtest/gtest.h>

#include "session/case_file.h"

namespace {

using pfsim::TensorSpec;
using pfsim::Values;

// init = "random" as docs/cases.md defines it, one element after another.
std::vector<double> documented_random(const Values& v, uint64_t n, bool integer) {
    std::vector<double> out;
    uint64_t x = v.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (uint64_t i = 0; i < n; ++i) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        double r = v.low + (v.high - v.low) * (static_cast<double>(x >> 11) * 0x1.0p-53);
        if (v.stepped) {
            r = v.low + v.step * std::floor((r - v.low) / v.step);
        } else if (integer) {
            r = std::floor(r);
        }
        out.push_back(r);
    }
    return out;
}

TensorSpec tensor(pfsim::rt::DataType dtype, uint32_t elements) {
    TensorSpec t;
    t.name = "t";
    t.dtype = dtype;
    t.shape = {elements};
    return t;
}

constexpr uint32_t kElements = (3u << 20) + 12345;  // three whole chunks of a million and a part

// Every element of `bytes` (tensor t), as a double, equals want(i).
template <typename Want>
void expect_elements(const TensorSpec& t, const std::vector<uint8_t>& bytes, Want want) {
    for (uint64_t i = 0; i < t.elements(); ++i) {
        ASSERT_EQ(pfsim::element_value(t.dtype, bytes.data(), i), want(i)) << "element " << i;
    }
}

TEST(CaseValues, RandomFloatsAreTheDocumentedSequenceInEveryChunk) {
    Values v;
    v.kind = Values::Kind::Random;
    v.low = -2;
    v.high = 3;
    v.seed = 11;
    const TensorSpec t = tensor(pfsim::rt::DataType::FLOAT32, kElements);
    const std::vector<uint8_t> bytes = pfsim::make_values(t, v);
    const std::vector<double> want = documented_random(v, kElements, false);
    expect_elements(t, bytes, [&](uint64_t i) { return static_cast<float>(want[i]); });
}

TEST(CaseValues, SteppedRandomHalvesAndFlooredIntegersAreTheDocumentedSequence) {
    Values v;
    v.kind = Values::Kind::Random;
    v.low = -0.5;
    v.high = 0.5;
    v.step = 0.015625;
    v.stepped = true;
    v.seed = 7;
    const TensorSpec h = tensor(pfsim::rt::DataType::FLOAT16, kElements);
    const std::vector<uint8_t> halves = pfsim::make_values(h, v);
    const std::vector<double> stepped = documented_random(v, kElements, false);
    expect_elements(h, halves, [&](uint64_t i) { return stepped[i]; });  // 1/64s: exact in fp16
    // A step that is no power of two divides (a power of two multiplies by its reciprocal);
    // with 2^20 steps in the range each value is converted as drawn, not from a table.
    Values fine = v;
    fine.step = 0x1.0p-20;
    const TensorSpec f32 = tensor(pfsim::rt::DataType::FLOAT32, kElements);
    const std::vector<uint8_t> fines = pfsim::make_values(f32, fine);
    const std::vector<double> fine_values = documented_random(fine, kElements, false);
    expect_elements(f32, fines, [&](uint64_t i) { return static_cast<float>(fine_values[i]); });
    Values tenth = v;
    tenth.step = 0.1;
    const TensorSpec f = tensor(pfsim::rt::DataType::FLOAT32, kElements);
    const std::vector<uint8_t> floats = pfsim::make_values(f, tenth);
    const std::vector<double> tenths = documented_random(tenth, kElements, false);
    expect_elements(f, floats, [&](uint64_t i) { return static_cast<float>(tenths[i]); });
    Values w;
    w.kind = Values::Kind::Random;
    w.low = -100;
    w.high = 100;
    w.seed = 3;
    const TensorSpec n = tensor(pfsim::rt::DataType::INT32, kElements);
    const std::vector<uint8_t> ints = pfsim::make_values(n, w);
    const std::vector<double> floored = documented_random(w, kElements, true);
    expect_elements(n, ints, [&](uint64_t i) { return floored[i]; });
}

TEST(CaseValues, ArangeAndFillHoldTheirValueAtEveryIndex) {
    Values a;
    a.kind = Values::Kind::Arange;
    a.start = 5;
    a.step = 0.25;
    const TensorSpec t = tensor(pfsim::rt::DataType::FLOAT32, kElements);
    const std::vector<uint8_t> arange = pfsim::make_values(t, a);
    expect_elements(t, arange, [](uint64_t i) { return static_cast<float>(5 + 0.25 * static_cast<double>(i)); });
    Values f;
    f.kind = Values::Kind::Fill;
    f.value = -7;
    const TensorSpec n = tensor(pfsim::rt::DataType::INT16, kElements);
    const std::vector<uint8_t> fill = pfsim::make_values(n, f);
    expect_elements(n, fill, [](uint64_t) { return -7.0; });
}

}  // namespace

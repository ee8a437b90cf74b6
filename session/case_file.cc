#include "session/case_file.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

#include <toml++/toml.h>

#include "base/host_buffer.h"
#include "base/toml_text.h"
#include "model/common/peer_window.h"
#include "session/npy.h"
#include "pto/pfsim_elements.hpp"

namespace pfsim {

namespace fs = std::filesystem;

namespace {

struct DtypeInfo {
    const char* name;
    rt::DataType type;
    const char* npy;
};
const DtypeInfo kDtypes[] = {
    {"float32", rt::DataType::FLOAT32, "<f4"}, {"float16", rt::DataType::FLOAT16, "<f2"},
    {"bfloat16", rt::DataType::BFLOAT16, "<u2"}, {"int8", rt::DataType::INT8, "|i1"},
    {"int16", rt::DataType::INT16, "<i2"},     {"int32", rt::DataType::INT32, "<i4"},
    {"int64", rt::DataType::INT64, "<i8"},     {"uint8", rt::DataType::UINT8, "|u1"},
    {"uint16", rt::DataType::UINT16, "<u2"},   {"uint32", rt::DataType::UINT32, "<u4"},
    {"uint64", rt::DataType::UINT64, "<u8"},   {"bool", rt::DataType::BOOL, "|b1"},
};

bool is_float(rt::DataType t) {
    return t == rt::DataType::FLOAT32 || t == rt::DataType::FLOAT16 || t == rt::DataType::BFLOAT16;
}

uint16_t to_bf16(float f) {  // round to nearest even, NaN kept quiet
    uint32_t x;
    std::memcpy(&x, &f, 4);
    if ((x & 0x7FFFFFFF) > 0x7F800000) return static_cast<uint16_t>((x >> 16) | 0x40);
    x += 0x7FFF + ((x >> 16) & 1);
    return static_cast<uint16_t>(x >> 16);
}

float from_bf16(uint16_t b) {
    const uint32_t x = uint32_t{b} << 16;
    float f;
    std::memcpy(&f, &x, 4);
    return f;
}

// out[i] = value(i) for begin <= i < end, in order, each converted to the
// tensor's element type; the type is chosen once, not per element.
template <typename Value>
void store_values(rt::DataType t, uint8_t* out, uint64_t begin, uint64_t end, Value value) {
    auto each = [&](auto convert) {
        using E = decltype(convert(0.0));
        for (uint64_t i = begin; i < end; ++i) {
            const E e = convert(value(i));
            std::memcpy(out + i * sizeof(E), &e, sizeof(E));
        }
    };
    switch (t) {
        case rt::DataType::FLOAT32: each([](double v) { return static_cast<float>(v); }); break;
        case rt::DataType::FLOAT16: each([](double v) { return pto::half(static_cast<float>(v)).bits; }); break;
        case rt::DataType::BFLOAT16: each([](double v) { return to_bf16(static_cast<float>(v)); }); break;
        case rt::DataType::INT8: each([](double v) { return static_cast<int8_t>(v); }); break;
        case rt::DataType::INT16: each([](double v) { return static_cast<int16_t>(v); }); break;
        case rt::DataType::INT32: each([](double v) { return static_cast<int32_t>(v); }); break;
        case rt::DataType::INT64: each([](double v) { return static_cast<int64_t>(v); }); break;
        case rt::DataType::UINT8: each([](double v) { return static_cast<uint8_t>(v); }); break;
        case rt::DataType::UINT16: each([](double v) { return static_cast<uint16_t>(v); }); break;
        case rt::DataType::UINT32: each([](double v) { return static_cast<uint32_t>(v); }); break;
        case rt::DataType::UINT64: each([](double v) { return static_cast<uint64_t>(v); }); break;
        case rt::DataType::BOOL: each([](double v) { return static_cast<uint8_t>(v != 0); }); break;
    }
}

// out's elements [begin, end) = table's element index(), called once per element
// in order; elements of `size` bytes.
template <typename Index>
void copy_from_table(uint64_t size, const uint8_t* table, uint8_t* out, uint64_t begin, uint64_t end, Index index) {
    auto each = [&](auto element) {
        using E = decltype(element);
        const E* from = reinterpret_cast<const E*>(table);
        for (uint64_t i = begin; i < end; ++i) std::memcpy(out + i * sizeof(E), from + index(), sizeof(E));
    };
    switch (size) {
        case 1: each(uint8_t{}); break;
        case 2: each(uint16_t{}); break;
        case 4: each(uint32_t{}); break;
        default: each(uint64_t{}); break;
    }
}

// A stepped random tensor whose range holds fewer steps than this converts
// each possible value once (copy_from_table).
constexpr double kStepTableSize = 65536;

// make_values fills a tensor in chunks of this many elements, on every host
// thread; each chunk computes what one pass over the tensor would.
constexpr uint64_t kChunk = uint64_t{1} << 20;

// fill(begin, end) over [0, n), one chunk of kChunk elements at a time.
template <typename Fill>
void in_chunks(uint64_t n, Fill fill) {
    const uint64_t chunks = (n + kChunk - 1) / kChunk;
    const uint64_t threads = std::min<uint64_t>(chunks, std::clamp(std::thread::hardware_concurrency(), 1u, 16u));
    std::atomic<uint64_t> next{0};
    auto work = [&] {
        for (uint64_t k; (k = next.fetch_add(1)) < chunks;) fill(k * kChunk, std::min(n, (k + 1) * kChunk));
    };
    std::vector<std::thread> pool;
    for (uint64_t i = 1; i < threads; ++i) pool.emplace_back(work);
    work();
    for (std::thread& t : pool) t.join();
}

// init = "random"'s generator: xorshift64 (13, 7, 17), one step per element.
// A step is linear over GF(2), so kChunk steps are one 64 x 64 bit matrix:
// each chunk's first state comes without stepping through the ones before.
struct Xorshift64 {
    static uint64_t step(uint64_t x) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        return x;
    }
    // The state before element 0, kChunk, 2 kChunk, ... below n.
    static std::vector<uint64_t> chunk_starts(uint64_t x, uint64_t n) {
        Matrix power{}, jump{};
        for (int j = 0; j < 64; ++j) {
            power[j] = step(uint64_t{1} << j);
            jump[j] = uint64_t{1} << j;
        }
        for (uint64_t steps = kChunk; steps; steps >>= 1) {
            if (steps & 1) jump = times(power, jump);
            power = times(power, power);
        }
        std::vector<uint64_t> starts;
        for (uint64_t i = 0; i < n; i += kChunk, x = apply(jump, x)) starts.push_back(x);
        return starts;
    }

private:
    using Matrix = std::array<uint64_t, 64>;  // column j: the image of bit j
    static uint64_t apply(const Matrix& m, uint64_t x) {
        uint64_t y = 0;
        for (int j = 0; j < 64; ++j) {
            if (x >> j & 1) y ^= m[j];
        }
        return y;
    }
    static Matrix times(const Matrix& a, const Matrix& b) {
        Matrix c;
        for (int j = 0; j < 64; ++j) c[j] = apply(a, b[j]);
        return c;
    }
};

// The case's [params] while it is read: a number may be given as a
// parameter's name.
const std::map<std::string, double>* g_params = nullptr;

// Reads one table of a case file with the keys it allows.
class Reader {
public:
    Reader(const std::string& file, const toml::table& table, std::string prefix)
        : file_(file), table_(table), prefix_(std::move(prefix)) {}

    std::string where(const toml::node* n = nullptr) const {
        const toml::source_region& r = n ? n->source() : table_.source();
        return file_ + ":" + std::to_string(r.begin.line);
    }
    [[noreturn]] void fail(const std::string& key, const std::string& what) const {
        const toml::node* n = table_.get(key);
        throw CaseError(where(n) + ": " + prefix_ + key + ": " + what);
    }
    void allow(std::initializer_list<const char*> keys) const {
        std::set<std::string> known(keys.begin(), keys.end());
        for (const auto& [k, v] : table_) {
            if (!known.count(std::string(k.str()))) {
                std::string list;
                for (const std::string& s : known) list += (list.empty() ? "" : ", ") + s;
                throw CaseError(where(&v) + ": " + prefix_ + std::string(k.str()) + ": unknown key (known: " + list + ")");
            }
        }
    }
    bool has(const std::string& key) const { return table_.contains(key); }
    std::string str(const std::string& key, const std::string& fallback = "", bool required = false) const {
        const toml::node* n = table_.get(key);
        if (!n) {
            if (required) throw CaseError(where() + ": " + prefix_ + key + ": missing");
            return fallback;
        }
        if (!n->is_string()) fail(key, "must be a string");
        return std::string(*n->value<std::string>());
    }
    // A number, or the name of a [params] entry.
    double number_of(const toml::node& n, const std::string& key) const {
        if (auto i = n.value_exact<int64_t>()) return static_cast<double>(*i);
        if (auto d = n.value_exact<double>()) return *d;
        if (auto text = n.value_exact<std::string>()) {
            // A product of parameters and numbers: "rows", "iters * 128", "rows * cols".
            double product = 1;
            std::stringstream factors(*text);
            std::string f;
            while (std::getline(factors, f, '*')) {
                const size_t b = f.find_first_not_of(' '), e = f.find_last_not_of(' ');
                f = b == std::string::npos ? "" : f.substr(b, e - b + 1);
                char* end = nullptr;
                const double v = std::strtod(f.c_str(), &end);
                if (!f.empty() && *end == '\0') {
                    product *= v;
                    continue;
                }
                auto it = g_params ? g_params->find(f) : std::map<std::string, double>::const_iterator{};
                if (!g_params || it == g_params->end()) {
                    std::string known;
                    if (g_params) {
                        for (const auto& [k, val] : *g_params) known += (known.empty() ? "" : ", ") + k;
                    }
                    throw CaseError(where(&n) + ": " + prefix_ + key + ": '" + f + "' is not a parameter (params: " +
                                    (known.empty() ? "none" : known) + ")");
                }
                product *= it->second;
            }
            return product;
        }
        throw CaseError(where(&n) + ": " + prefix_ + key + ": must be a number or a parameter's name");
    }
    int64_t integer_of(const toml::node& n, const std::string& key) const {
        const double v = number_of(n, key);
        if (v != static_cast<double>(static_cast<int64_t>(v))) {
            throw CaseError(where(&n) + ": " + prefix_ + key + ": must be an integer, not " + std::to_string(v));
        }
        return static_cast<int64_t>(v);
    }
    double number(const std::string& key, double fallback) const {
        const toml::node* n = table_.get(key);
        return n ? number_of(*n, key) : fallback;
    }
    int64_t integer(const std::string& key, int64_t fallback, bool required = false) const {
        const toml::node* n = table_.get(key);
        if (!n) {
            if (required) throw CaseError(where() + ": " + prefix_ + key + ": missing");
            return fallback;
        }
        return integer_of(*n, key);
    }
    bool boolean(const std::string& key, bool fallback) const {
        const toml::node* n = table_.get(key);
        if (!n) return fallback;
        if (auto b = n->value_exact<bool>()) return *b;
        fail(key, "must be true or false");
    }
    const toml::array* array(const std::string& key) const {
        const toml::node* n = table_.get(key);
        if (!n) return nullptr;
        if (!n->is_array()) fail(key, "must be an array");
        return n->as_array();
    }
    // An array of tables (the [[incores]] / [[tensors]] / [[scalars]] lists).
    std::vector<const toml::table*> tables(const std::string& key) const {
        std::vector<const toml::table*> out;
        const toml::array* a = array(key);
        if (!a) return out;
        for (const toml::node& n : *a) {
            if (!n.is_table()) fail(key, "must be an array of tables ([[" + key + "]])");
            out.push_back(n.as_table());
        }
        return out;
    }

private:
    const std::string& file_;
    const toml::table& table_;
    std::string prefix_;
};

std::string resolve(const std::string& dir, const std::string& p) {
    return fs::path(p).is_absolute() ? p : (fs::path(dir) / p).lexically_normal().string();
}

// The value keys of a tensor (or of its golden table).
Values read_values(const Reader& r, bool float_type, const std::string& dir) {
    Values v;
    const std::string init = r.str("init", r.has("npy") ? "npy" : "zeros");
    static const std::map<std::string, Values::Kind> kinds = {
        {"zeros", Values::Kind::Zeros}, {"fill", Values::Kind::Fill}, {"arange", Values::Kind::Arange},
        {"random", Values::Kind::Random}, {"npy", Values::Kind::Npy}};
    auto it = kinds.find(init);
    if (it == kinds.end()) r.fail("init", "must be zeros, fill, arange, random or npy, not '" + init + "'");
    v.kind = it->second;
    v.value = r.number("value", 0);
    v.start = r.number("start", 0);
    v.step = r.number("step", 1);
    v.stepped = r.has("step");
    if (v.stepped && v.step <= 0 && v.kind == Values::Kind::Random) r.fail("step", "must be positive");
    v.low = r.number("low", float_type ? -1 : 0);
    v.high = r.number("high", float_type ? 1 : 100);
    if (v.kind == Values::Kind::Random && v.low > v.high) {
        r.fail("low", "is above high (" + std::to_string(v.low) + " > " + std::to_string(v.high) + ")");
    }
    v.seed = static_cast<uint64_t>(r.integer("seed", 0));
    if (v.kind == Values::Kind::Fill && !r.has("value")) r.fail("value", "missing (init = \"fill\" needs it)");
    if (v.kind == Values::Kind::Npy) v.npy = resolve(dir, r.str("npy", "", true));
    return v;
}

// [lowest, past) holds every integer an element of integer type `t` can be.
bool integer_range(rt::DataType t, double* lowest, double* past) {
    int bits = 0;
    bool is_signed = true;
    switch (t) {
        case rt::DataType::INT8: bits = 8; break;
        case rt::DataType::INT16: bits = 16; break;
        case rt::DataType::INT32: bits = 32; break;
        case rt::DataType::INT64: bits = 64; break;
        case rt::DataType::UINT8: bits = 8, is_signed = false; break;
        case rt::DataType::UINT16: bits = 16, is_signed = false; break;
        case rt::DataType::UINT32: bits = 32, is_signed = false; break;
        case rt::DataType::UINT64: bits = 64, is_signed = false; break;
        default: return false;  // floats round; bool is v != 0
    }
    *lowest = is_signed ? -std::ldexp(1.0, bits - 1) : 0;
    *past = std::ldexp(1.0, is_signed ? bits - 1 : bits);
    return true;
}

// Refuses values an integer tensor of `n` elements cannot hold (converting
// them toward zero would be undefined): fill's value, arange's first and last,
// random's extremes.
void check_values_fit(const Reader& r, const Values& v, rt::DataType t, uint64_t n) {
    double lowest = 0, past = 0;
    if (!integer_range(t, &lowest, &past)) return;
    auto check = [&](const char* key, const char* what, double x) {
        const double whole = std::trunc(x);
        if (!(whole >= lowest && whole < past)) {
            std::ostringstream os;
            os << what << ", " << x << ", is beyond " << dtype_name(t) << " (" << lowest << " to " << past - 1 << ")";
            r.fail(key, os.str());
        }
    };
    switch (v.kind) {
        case Values::Kind::Fill: check("value", "the value", v.value); break;
        case Values::Kind::Arange:
            check("start", "the first element", v.start);
            {  // named by the key that sets it: step, or else init (its default step 1 with the shape's length)
                const double last = v.start + v.step * static_cast<double>(n - 1);
                std::ostringstream what;
                what << "the last element (start + step x " << n - 1 << " = " << v.start << " + " << v.step << " x "
                     << n - 1 << ")";
                check(r.has("step") ? "step" : "init", what.str().c_str(), last);
            }
            break;
        case Values::Kind::Random:  // low + (high - low) * u for u up to 1 - 2^-53, rounded as make_values does
            check("low", "the lowest value", std::floor(v.low));  // floored, unless stepped (then at least low)
            check("high", "the highest value", v.low + (v.high - v.low) * (1 - 0x1.0p-53));
            break;
        default: break;
    }
}

}  // namespace

std::vector<std::pair<std::string, std::string>> CaseSpec::inputs() const {
    std::vector<std::pair<std::string, std::string>> in = {{"the case file", path},
                                                           {"the orchestration's source", orchestration}};
    if (!golden_source.empty()) in.push_back({"the [golden] source", golden_source});
    for (const IncoreSpec& k : incores) in.push_back({"the source of incore " + std::to_string(k.func_id), k.source});
    for (const TensorSpec& t : tensors) {
        if (t.init.kind == Values::Kind::Npy) in.push_back({"tensor " + t.name + "'s .npy", t.init.npy});
        if (t.has_golden_values && t.golden_values.kind == Values::Kind::Npy) {
            in.push_back({"tensor " + t.name + "'s golden .npy", t.golden_values.npy});
        }
    }
    return in;
}

std::string input_named_by(const std::string& output, const std::vector<std::pair<std::string, std::string>>& inputs) {
    for (const auto& [what, input] : inputs) {
        std::error_code ec;
        if (!output.empty() && !input.empty() && fs::equivalent(output, input, ec) && !ec) return what + " (" + input + ")";
    }
    return "";
}

bool is_tensor_name(const std::string& name) {
    auto allowed = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.'; };
    return !name.empty() && name.size() <= 200 && name[0] != '.' && std::all_of(name.begin(), name.end(), allowed);
}

bool is_case_file(const std::string& path) {
    return path.size() > 5 && path.compare(path.size() - 5, 5, ".toml") == 0;
}

uint64_t TensorSpec::elements() const {
    uint64_t n = 1;
    for (uint32_t d : shape) n *= d;
    return n;
}

rt::DataType parse_dtype(const std::string& name, const std::string& where) {
    for (const DtypeInfo& d : kDtypes) {
        if (name == d.name) return d.type;
    }
    std::string list;
    for (const DtypeInfo& d : kDtypes) list += (list.empty() ? "" : ", ") + std::string(d.name);
    throw CaseError(where + ": unknown dtype '" + name + "' (known: " + list + ")");
}

const char* dtype_name(rt::DataType t) {
    for (const DtypeInfo& d : kDtypes) {
        if (d.type == t) return d.name;
    }
    return "?";
}

std::string npy_descr(rt::DataType t) {
    for (const DtypeInfo& d : kDtypes) {
        if (d.type == t) return d.npy;
    }
    return "";
}

double element_value(rt::DataType t, const uint8_t* bytes, uint64_t i) {
    auto get = [&](auto x) {  // element i, read as x's type: its size is the dtype's
        std::memcpy(&x, bytes + i * sizeof x, sizeof x);
        return x;
    };
    switch (t) {
        case rt::DataType::FLOAT32: return get(float{});
        case rt::DataType::FLOAT16: {
            pto::half h;
            h.bits = get(uint16_t{});
            return float(h);
        }
        case rt::DataType::BFLOAT16: return from_bf16(get(uint16_t{}));
        case rt::DataType::INT8: return get(int8_t{});
        case rt::DataType::INT16: return get(int16_t{});
        case rt::DataType::INT32: return get(int32_t{});
        case rt::DataType::INT64: return static_cast<double>(get(int64_t{}));
        case rt::DataType::UINT8: return get(uint8_t{});
        case rt::DataType::UINT16: return get(uint16_t{});
        case rt::DataType::UINT32: return get(uint32_t{});
        case rt::DataType::UINT64: return static_cast<double>(get(uint64_t{}));
        case rt::DataType::BOOL: return get(uint8_t{}) != 0;
    }
    return 0;
}

namespace {

// A tensor's values from its .npy file, which must hold the tensor's type and element count.
std::vector<uint8_t> npy_values(const TensorSpec& t, const Values& v, uint64_t n) {
    NpyArray a;
    try {
        a = read_npy(v.npy);
    } catch (const std::invalid_argument& e) {
        throw CaseError(t.where + ": tensor " + t.name + ": " + e.what());
    }
    const std::string want = npy_descr(t.dtype);
    uint64_t count = 1;
    for (uint64_t d : a.shape) count *= d;
    if (a.descr != want || count != n) {
        std::string shape;
        for (uint64_t d : a.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
        throw CaseError(t.where + ": tensor " + t.name + ": " + v.npy + " holds " + a.descr + " [" + shape +
                        "], the tensor is " + dtype_name(t.dtype) + " (" + (want.empty() ? "no .npy type" : want) +
                        ") with " + std::to_string(n) + " elements");
    }
    return std::move(a.data);
}

}  // namespace

std::vector<uint8_t> make_values(const TensorSpec& t, const Values& v) {
    const uint64_t n = t.elements(), size = rt::element_size(t.dtype);
    if (v.kind == Values::Kind::Npy) return npy_values(t, v, n);  // its own buffer: no zeroed one to throw away
    std::vector<uint8_t> out = host_buffer(n * size);
    switch (v.kind) {
        case Values::Kind::Zeros: break;
        case Values::Kind::Fill:
            in_chunks(n, [&](uint64_t begin, uint64_t end) {
                store_values(t.dtype, out.data(), begin, end, [&](uint64_t) { return v.value; });
            });
            break;
        case Values::Kind::Arange:
            in_chunks(n, [&](uint64_t begin, uint64_t end) {
                store_values(t.dtype, out.data(), begin, end,
                             [&](uint64_t i) { return v.start + v.step * static_cast<double>(i); });
            });
            break;
        case Values::Kind::Random: {
            const std::vector<uint64_t> starts =
                Xorshift64::chunk_starts(v.seed * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull, n);
            const bool floor_to_int = !v.stepped && !is_float(t.dtype);
            // Dividing by a power of two is multiplying by its reciprocal, exactly (both are x * 2^-k rounded once).
            int exponent = 0;
            const bool step_is_power_of_two = v.stepped && std::frexp(v.step, &exponent) == 0.5 && std::isnormal(1 / v.step);
            const double per_step = 1 / v.step;
            const double span = v.high - v.low;
            // The number of whole steps element u's value lies above low.
            auto steps_of = [&](double u) {
                const double above = v.low + span * u - v.low;
                return std::floor(step_is_power_of_two ? above * per_step : above / v.step);
            };
            const double most_steps = v.stepped ? steps_of(1 - 0x1.0p-53) : 0;  // the largest u gives the most
            if (v.stepped && most_steps >= 0 && most_steps < kStepTableSize) {
                // Few values: each converted once, into a table indexed by its steps.
                const uint64_t values = static_cast<uint64_t>(most_steps) + 1;
                std::vector<uint8_t> table(values * size);
                store_values(t.dtype, table.data(), 0, values,
                             [&](uint64_t k) { return v.low + v.step * static_cast<double>(k); });
                in_chunks(n, [&](uint64_t begin, uint64_t end) {
                    uint64_t x = starts[begin / kChunk];
                    copy_from_table(size, table.data(), out.data(), begin, end, [&] {
                        x = Xorshift64::step(x);
                        return static_cast<uint64_t>(steps_of(static_cast<double>(x >> 11) * 0x1.0p-53));
                    });
                });
                break;
            }
            in_chunks(n, [&](uint64_t begin, uint64_t end) {
                uint64_t x = starts[begin / kChunk];
                store_values(t.dtype, out.data(), begin, end, [&](uint64_t) {  // called once per element, in order
                    x = Xorshift64::step(x);
                    const double u = static_cast<double>(x >> 11) * 0x1.0p-53;  // [0, 1)
                    double r = v.low + span * u;
                    if (v.stepped) {
                        r = v.low + v.step * steps_of(u);
                    } else if (floor_to_int) {
                        r = std::floor(r);
                    }
                    return r;
                });
            });
            break;
        }
        case Values::Kind::Npy: break;  // read above, not filled
    }
    return out;
}

CaseSpec read_case(const std::string& path, const std::vector<std::string>& overrides) {
    if (fs::is_directory(path)) throw CaseError(path + ": is a directory, not a case file");
    std::ifstream in(path);
    if (!in) throw CaseError(path + ": cannot read the case file");
    std::ostringstream ss;
    ss << in.rdbuf();
    toml::table root;
    try {
        std::string text = ss.str();
        if (text.rfind("\xEF\xBB\xBF", 0) == 0) text.erase(0, 3);  // a UTF-8 byte order mark, as editors may write
        const std::string problem = toml_text_problem(text);
        if (!problem.empty()) throw CaseError(path + ":" + problem);
        root = toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        throw CaseError(path + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
    }
    const std::string dir = fs::absolute(path).parent_path().string();
    CaseSpec c;
    c.path = path;
    Reader top(path, root, "");
    top.allow({"name", "description", "enable_sdma", "include_dirs", "expected_gain", "params", "orchestration",
               "incores", "tensors", "scalars", "golden", "check", "ranks", "window_bytes"});
    if (const toml::node* p = root.get("params")) {
        if (!p->is_table()) top.fail("params", "must be a table of NAME = number");
        for (const auto& [k, v] : *p->as_table()) {
            const auto i = v.value_exact<int64_t>();
            const auto d = v.value_exact<double>();
            if (!i && !d) throw CaseError(top.where(&v) + ": params." + std::string(k.str()) + ": must be a number");
            c.params[std::string(k.str())] = i ? static_cast<double>(*i) : *d;
        }
    }
    std::set<std::string> overridden;
    for (const std::string& o : overrides) {
        const size_t eq = o.find('=');
        const std::string key = o.substr(0, eq);
        if (eq == std::string::npos) throw CaseError("--arg " + o + ": takes NAME=VALUE (a [params] name of " + path + ")");
        if (!overridden.insert(key).second) throw CaseError("--arg " + key + " given twice");
        if (eq == std::string::npos || !c.params.count(key)) {
            std::string known;
            for (const auto& [k, v] : c.params) known += (known.empty() ? "" : ", ") + k;
            throw CaseError("--arg " + o + ": " + path + " has no parameter '" + key + "' (params: " +
                            (known.empty() ? "none" : known) + ")");
        }
        try {
            size_t used = 0;
            const std::string value = o.substr(eq + 1);
            double v = std::stod(value, &used);
            // A size may carry its unit, as a built-in kernel's --arg does: 4KiB, 1MiB, 2GB.
            static const std::map<std::string, double> units = {
                {"", 1},          {"B", 1},          {"KiB", 1024.0},  {"MiB", 1048576.0}, {"GiB", 1073741824.0},
                {"KB", 1e3},      {"MB", 1e6},       {"GB", 1e9}};
            const auto unit = units.find(value.substr(used));
            if (unit == units.end()) throw std::invalid_argument("trailing text");
            c.params[key] = v * unit->second;
        } catch (const std::exception&) {
            throw CaseError("--arg " + o + ": the value is not a number (a size may end in B, KiB, MiB, GiB, KB, MB, GB)");
        }
    }
    struct ParamsInScope {
        explicit ParamsInScope(const std::map<std::string, double>* p) { g_params = p; }
        ~ParamsInScope() { g_params = nullptr; }
    } in_scope(&c.params);
    c.name = top.str("name", fs::path(path).stem().string());
    c.description = top.str("description");
    c.enable_sdma = top.boolean("enable_sdma", true);
    c.in_check = top.boolean("check", true);
    const int64_t ranks = top.integer("ranks", 1);
    if (ranks < 1 || ranks > kMaxRanks) top.fail("ranks", "must be 1 to " + std::to_string(kMaxRanks) + ", not " + std::to_string(ranks));
    c.ranks = static_cast<uint32_t>(ranks);
    if (c.ranks > 1) {
        const int64_t window = top.integer("window_bytes", 0, true);
        if (window <= 0) top.fail("window_bytes", "must be above 0");
        c.window_bytes = static_cast<uint64_t>(window);
        for (const char* reserved : {"rank", "ranks"}) {
            if (c.params.count(reserved)) {
                top.fail("params", std::string("'") + reserved + "' is the golden's own parameter in a level-3 case");
            }
        }
    } else if (top.has("window_bytes")) {
        top.fail("window_bytes", "is for a level-3 case (ranks > 1)");
    }
    if (const toml::array* dirs = top.array("include_dirs")) {
        for (const toml::node& d : *dirs) {
            if (!d.is_string()) top.fail("include_dirs", "must be strings");
            c.include_dirs.push_back(resolve(dir, std::string(*d.value<std::string>())));
        }
    }
    if (const toml::array* g = top.array("expected_gain")) {
        if (g->size() != 2 || !(*g)[0].is_number() || !(*g)[1].is_number()) {
            top.fail("expected_gain", "must be [min, max] in percent");
        }
        c.expected_min_pct = (*g)[0].value<double>().value_or(0);
        c.expected_max_pct = (*g)[1].value<double>().value_or(0);
        if (c.expected_min_pct > c.expected_max_pct) top.fail("expected_gain", "min is above max");
    }

    if (!top.has("orchestration")) throw CaseError(path + ": orchestration: missing (a table with source and function)");
    const toml::table* orch = root["orchestration"].as_table();
    if (!orch) top.fail("orchestration", "must be a table with source and function");
    Reader o(path, *orch, "orchestration.");
    o.allow({"source", "function", "config"});
    c.orchestration = resolve(dir, o.str("source", "", true));
    c.function = o.str("function", c.function);
    c.config_function = o.str("config", c.config_function);

    if (const toml::node* g = root.get("golden")) {
        if (!g->is_table()) top.fail("golden", "must be a table with source (and function)");
        Reader gr(path, *g->as_table(), "golden.");
        gr.allow({"source", "function"});
        c.golden_source = resolve(dir, gr.str("source", "", true));
        c.golden_function = gr.str("function", c.golden_function);
    }

    std::set<int64_t> func_ids;
    for (const toml::table* t : top.tables("incores")) {
        Reader r(path, *t, "incores.");
        r.allow({"func_id", "source", "core_type"});
        IncoreSpec k;
        const int64_t id = r.integer("func_id", 0, true);
        if (id < 0 || id > 0x7fffffff) r.fail("func_id", "must be a non-negative 32-bit integer");
        if (!func_ids.insert(id).second) r.fail("func_id", std::to_string(id) + " is declared twice");
        k.func_id = static_cast<int32_t>(id);
        k.source = resolve(dir, r.str("source", "", true));
        const std::string core = r.str("core_type", "", true);
        if (core != "aiv" && core != "aic") r.fail("core_type", "must be aiv or aic, not '" + core + "'");
        k.vector = core == "aiv";
        k.where = r.where();
        c.incores.push_back(k);
    }
    if (c.incores.empty()) throw CaseError(path + ": incores: a case needs at least one [[incores]] table");

    std::set<std::string> names;
    for (const toml::table* t : top.tables("tensors")) {
        Reader r(path, *t, "tensors.");
        r.allow({"name", "dtype", "shape", "init", "value", "start", "step", "low", "high", "seed", "npy", "output",
                 "golden", "golden_npy", "rtol", "atol"});
        TensorSpec s;
        s.where = r.where();
        s.name = r.str("name", "", true);
        if (!is_tensor_name(s.name)) {
            r.fail("name", "'" + s.name + "' is not a tensor name (letters, digits, '_', '-' and '.', not first; " +
                               "it names the output's file under --outputs)");
        }
        if (!names.insert(s.name).second) r.fail("name", "'" + s.name + "' is used twice");
        s.dtype = parse_dtype(r.str("dtype", "float32"), r.where(t->get("dtype")) + ": tensors.dtype");
        const toml::array* shape = r.array("shape");
        if (!shape || shape->empty() || shape->size() > rt::MAX_TENSOR_DIMS) r.fail("shape", "must list 1 to 5 dimensions");
        for (const toml::node& d : *shape) {
            const int64_t v = r.integer_of(d, "shape");
            if (v <= 0 || v > 0xffffffffll) r.fail("shape", "dimensions must be positive integers, not " + std::to_string(v));
            s.shape.push_back(static_cast<uint32_t>(v));
        }
        s.init = read_values(r, is_float(s.dtype), dir);
        check_values_fit(r, s.init, s.dtype, s.elements());
        s.output = r.boolean("output", false);
        if (const toml::node* g = t->get("golden")) {
            if (!s.output) r.fail("golden", "only outputs (output = true) have a golden");
            if (g->is_string()) {
                s.golden_tensor = r.str("golden");
            } else if (const toml::table* gt = g->as_table()) {
                Reader gr(path, *gt, "tensors.golden.");
                gr.allow({"init", "value", "start", "step", "low", "high", "seed", "npy"});
                s.has_golden_values = true;
                s.golden_values = read_values(gr, is_float(s.dtype), dir);
                check_values_fit(gr, s.golden_values, s.dtype, s.elements());
            } else {
                r.fail("golden", "must be a tensor's name or a table of values ({ init = ... })");
            }
        }
        if (r.has("golden_npy")) {
            if (!s.output) r.fail("golden_npy", "only outputs (output = true) have a golden");
            if (r.has("golden")) r.fail("golden_npy", "give golden or golden_npy, not both");
            s.has_golden_values = true;
            s.golden_values.kind = Values::Kind::Npy;
            s.golden_values.npy = resolve(dir, r.str("golden_npy"));
        }
        if (s.output && s.golden_tensor.empty() && !s.has_golden_values && c.golden_source.empty()) {
            r.fail("output", "an output needs golden or golden_npy (or the case a [golden] source)");
        }
        s.rtol = r.number("rtol", s.rtol);
        s.atol = r.number("atol", s.atol);
        if (s.rtol < 0 || s.atol < 0) r.fail(s.rtol < 0 ? "rtol" : "atol", "must not be negative");
        c.tensors.push_back(s);
    }
    for (const TensorSpec& s : c.tensors) {
        if (s.golden_tensor.empty()) continue;
        const TensorSpec* other = nullptr;
        for (const TensorSpec& t : c.tensors) other = t.name == s.golden_tensor ? &t : other;
        if (!other) throw CaseError(s.where + ": tensors.golden: no tensor named '" + s.golden_tensor + "'");
        if (other->dtype != s.dtype || other->elements() != s.elements()) {
            throw CaseError(s.where + ": tensors.golden: '" + s.golden_tensor + "' has another dtype or size than " + s.name);
        }
    }
    if (c.tensors.size() > 256) throw CaseError(path + ": tensors: at most 256");

    for (const toml::table* t : top.tables("scalars")) {
        Reader r(path, *t, "scalars.");
        r.allow({"name", "type", "value"});
        ScalarSpec s;
        s.name = r.str("name", "", true);
        if (!names.insert(s.name).second) r.fail("name", "'" + s.name + "' is used twice");
        s.type = r.str("type", "int64");
        if (s.type == "comm_context") {
            if (c.ranks == 1) r.fail("type", "comm_context is for a level-3 case (ranks > 1)");
            if (r.has("value")) r.fail("value", "a comm_context's value is the running rank's CommContext");
            c.scalars.push_back(s);
            continue;
        }
        if (!r.has("value")) r.fail("value", "missing");
        if (s.type == "float32") {
            const float f = static_cast<float>(r.number("value", 0));
            s.value = f;
            uint32_t b;
            std::memcpy(&b, &f, 4);
            s.bits = b;
        } else if (s.type == "float64") {
            const double d = r.number("value", 0);
            s.value = d;
            std::memcpy(&s.bits, &d, 8);
        } else if (s.type == "int64" || s.type == "int32" || s.type == "uint64" || s.type == "uint32") {
            const int64_t v = r.integer("value", 0);
            s.value = static_cast<double>(v);
            if ((s.type == "int32" && (v < INT32_MIN || v > INT32_MAX)) || (s.type == "uint32" && (v < 0 || v > UINT32_MAX)) ||
                (s.type == "uint64" && v < 0)) {
                r.fail("value", std::to_string(v) + " does not fit " + s.type);
            }
            s.bits = s.type == "uint32" || s.type == "int32" ? static_cast<uint64_t>(static_cast<uint32_t>(v))
                                                              : static_cast<uint64_t>(v);
            if (s.type == "int32") s.bits = static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(v)));
        } else {
            r.fail("type", "must be int64, int32, uint64, uint32, float32, float64 or comm_context, not '" + s.type + "'");
        }
        c.scalars.push_back(s);
    }
    if (c.scalars.size() > 128) throw CaseError(path + ": scalars: at most 128");
    return c;
}

}  // namespace pfsim

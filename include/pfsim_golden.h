// A case's computed golden: host C++ that says what the outputs must hold,
// for references a case file cannot write as values (a matrix product, a
// gather). A case names it in its [golden] table; pfsim compiles it like an
// orchestration (host C++17, through the compile cache) and, before every run
// of the case, calls
//
//     extern "C" void compute_golden(pfsim::golden::Args& args);
//
// once, on the host, with every tensor holding its initial values (inputs and
// outputs alike, as simpler's compute_golden sees a clone of the arguments) and
// the case's [params] and scalars. It overwrites the outputs (copies) with the
// values they must have after the run; its writes to inputs are ignored (pfsim
// sees them and makes those inputs again for the run). It may throw std::invalid_argument for
// parameters it cannot serve: the run then stops (exit 2) with the message,
// named by the source. Elements are little-endian, row-major; float16 and
// bfloat16 elements are pto::half / pto::bfloat16_t of <pto/pfsim_elements.hpp>.
#pragma once

#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>

namespace pfsim::golden {

struct Tensor {
    const char* name;
    const char* dtype;        // as the case file names it: "float32", "float16", "int8", ...
    uint32_t element_size;    // bytes
    uint32_t ndims;
    uint32_t shape[5];
    uint64_t elements;
    bool output;
    void* data;               // elements * element_size bytes

    // The elements as T (its size must be the element size).
    template <typename T>
    T* as() const {
        if (sizeof(T) != element_size) {
            throw std::invalid_argument(std::string("tensor ") + name + " holds " + dtype + " elements of " +
                                        std::to_string(element_size) + " bytes, not of " + std::to_string(sizeof(T)));
        }
        return static_cast<T*>(data);
    }
};

struct Number {
    const char* name;
    double value;
};

struct Args {
    Tensor* tensors;  // in the case file's order
    uint32_t tensor_count;
    const Number* params;  // [params], after --arg
    uint32_t param_count;
    const Number* scalars;  // [[scalars]], by value (integers and floats alike)
    uint32_t scalar_count;

    Tensor& tensor(const char* name) const {
        for (uint32_t i = 0; i < tensor_count; ++i) {
            if (std::strcmp(tensors[i].name, name) == 0) return tensors[i];
        }
        throw std::invalid_argument(std::string("the case has no tensor named ") + name);
    }
    double param(const char* name) const { return find(params, param_count, name, "parameter"); }
    double scalar(const char* name) const { return find(scalars, scalar_count, name, "scalar"); }

private:
    static double find(const Number* list, uint32_t n, const char* name, const char* what) {
        for (uint32_t i = 0; i < n; ++i) {
            if (std::strcmp(list[i].name, name) == 0) return list[i].value;
        }
        throw std::invalid_argument(std::string("the case has no ") + what + " named " + name);
    }
};

using ComputeGolden = void (*)(Args&);

}  // namespace pfsim::golden

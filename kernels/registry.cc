#include "kernels/registry.h"

#include <memory>
#include <new>
#include <set>
#include <stdexcept>

#include "cases/case_file.h"
#include "loader/embedded_files.h"
#include "loader/shared_object.h"
#include "model/config/units.h"

namespace pfsim {

namespace {
std::map<std::string, const KernelCase*>& mutable_registry() {
    static std::map<std::string, const KernelCase*> registry;
    return registry;
}
}  // namespace

const std::map<std::string, const KernelCase*>& kernel_registry() { return mutable_registry(); }

const KernelCase* find_kernel(const std::string& name) {
    auto it = kernel_registry().find(name);
    return it == kernel_registry().end() ? nullptr : it->second;
}

RegisterKernel::RegisterKernel(const KernelCase* k) { mutable_registry()[k->name()] = k; }

KernelArgs resolve_kernel_args(const KernelCase& k, const std::vector<std::string>& assignments) {
    KernelArgs out;
    auto parse = [&](const std::string& name, const std::string& text) {
        uint64_t v = 0;
        const std::string err = parse_unsigned(text, true, &v);
        if (!err.empty()) throw std::invalid_argument("kernel " + k.name() + ": --arg " + name + ": " + err);
        out[name] = v;
    };
    for (const KernelArgSpec& a : k.args()) parse(a.name, a.default_value);
    std::set<std::string> given;
    for (const std::string& s : assignments) {
        const size_t eq = s.find('=');
        if (eq == std::string::npos) throw std::invalid_argument("kernel " + k.name() + ": --arg " + s + ": expected name=value");
        const std::string name = s.substr(0, eq);
        if (!given.insert(name).second) throw std::invalid_argument("kernel " + k.name() + ": --arg " + name + " given twice");
        bool known = false;
        std::string list;
        for (const KernelArgSpec& a : k.args()) {
            known |= a.name == name;
            list += (list.empty() ? "" : ", ") + a.name;
        }
        if (!known) {
            throw std::invalid_argument("kernel " + k.name() + " has no argument '" + name + "'" +
                                        (list.empty() ? " (it takes none)" : " (it takes " + list + ")"));
        }
        parse(name, s.substr(eq + 1));
    }
    return out;
}

std::vector<std::string> shipped_cases() {
    const std::string root = unpack_embedded(KernelCompiler().cache_dir(), "kernels");
    std::vector<std::string> cases;
    for (const EmbeddedFile& f : embedded_files("kernels")) {
        const std::string path = f.path;
        if (path.rfind("cases/", 0) == 0 && is_case_file(path)) {
            cases.push_back(root + "/" + path);
        }
    }
    return cases;
}

std::string shipped_case_named(const std::string& name) {
    for (const std::string& path : shipped_cases()) {
        if (read_case(path).name == name) return path;
    }
    return "";
}

std::string shipped_case_label(const std::string& path) {
    const std::string root = unpack_embedded(KernelCompiler().cache_dir(), "kernels") + "/";
    return path.rfind(root, 0) == 0 ? "kernels/" + path.substr(root.size()) : path;
}

rt::KernelEntries load_kernel(KernelCompiler& compiler, const KernelCase& k, const rt::LaunchSpec& spec) {
    const std::string source = unpack_embedded(compiler.cache_dir(), "kernels") + "/" + k.source();
    rt::KernelEntries entries;
    if (spec.vector_per_block) {
        entries.aiv = reinterpret_cast<rt::KernelEntry>(load_symbol(compiler, source, BuildKind::Aiv, "kernel_entry"));
    }
    if (spec.cube) {
        entries.aic = reinterpret_cast<rt::KernelEntry>(load_symbol(compiler, source, BuildKind::Aic, "kernel_entry"));
    }
    return entries;
}

int64_t make_tensor(PreparedKernel& p, rt::Platform& platform, uint64_t bytes, uint64_t* gm_addr) {
    *gm_addr = platform.gm_alloc(bytes);
    auto holder = std::make_unique<uint8_t[]>(sizeof(rt::ChipTensor) + alignof(rt::ChipTensor));
    void* place = holder.get();
    size_t space = sizeof(rt::ChipTensor) + alignof(rt::ChipTensor);
    const auto shape = static_cast<uint32_t>(bytes);  // (the shape is metadata: kernels read buffer.size)
    auto* t = new (std::align(alignof(rt::ChipTensor), sizeof(rt::ChipTensor), place, space))
        rt::ChipTensor(rt::contiguous_tensor(platform.device_pointer(*gm_addr), rt::DataType::UINT8, &shape, 1));
    t->buffer.size = bytes;
    const auto handle = reinterpret_cast<int64_t>(t);
    p.host_memory.push_back(std::move(holder));
    return handle;
}

std::vector<uint8_t> random_bytes(uint64_t bytes, uint64_t seed) {
    std::vector<uint8_t> out(bytes);
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    for (uint8_t& b : out) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        b = static_cast<uint8_t>(x);
    }
    return out;
}

}  // namespace pfsim

#include "tests/support/harness.h"

#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include "model/common/payload.h"
#include "model/common/read_around_l2.h"
#include "model/common/time.h"

namespace pfsim::test {

Harness::Harness(sc_core::sc_module_name name, const Config& cfg, SocOptions options)
    : sc_module(name), cached("cached"), uncached("uncached"), mmio("mmio"), soc("soc", cfg, std::move(options)),
      rings_(cfg.count("sdma.channels")) {
    cached.bind(soc.l2.cached);
    uncached.bind(soc.l2.uncached);
    mmio.bind(soc.sdma.mmio);
}

Tick Harness::transport(tlm_utils::simple_initiator_socket<Harness>& s, bool write, uint64_t addr,
                        void* data, uint64_t len, Tick issue) {
    prepare_payload(payload_, write, addr, data, len);
    return transport_at(s, payload_, issue);
}

Tick Harness::read(uint64_t addr, void* data, uint64_t len, Tick issue) {
    return transport(cached, false, addr, data, len, issue);
}
Tick Harness::write(uint64_t addr, const void* data, uint64_t len, Tick issue) {
    return transport(cached, true, addr, const_cast<void*>(data), len, issue);
}
Tick Harness::read_around(uint64_t addr, void* data, uint64_t len, Tick issue) {
    ReadAroundL2Extension around;
    payload_.set_extension(&around);
    const Tick done = transport(cached, false, addr, data, len, issue);
    payload_.clear_extension(&around);
    return done;
}
Tick Harness::atomic_add(uint64_t addr, const void* data, uint64_t len, AtomicElement element, Tick issue) {
    AtomicAddExtension add;
    add.element = element;
    payload_.set_extension(&add);
    const Tick done = transport(cached, true, addr, const_cast<void*>(data), len, issue);
    payload_.clear_extension(&add);
    return done;
}
Tick Harness::uncached_read(uint64_t addr, void* data, uint64_t len, Tick issue) {
    return transport(uncached, false, addr, data, len, issue);
}
Tick Harness::uncached_write(uint64_t addr, const void* data, uint64_t len, Tick issue) {
    return transport(uncached, true, addr, const_cast<void*>(data), len, issue);
}

Tick Harness::mmio_write(uint64_t addr, uint64_t value, unsigned bytes) {
    return transport(mmio, true, addr, &value, bytes, now());
}

uint64_t Harness::mmio_read(uint64_t addr, unsigned bytes) {
    uint64_t value = 0;
    transport(mmio, false, addr, &value, bytes, now());
    return value;
}

void Harness::setup_ring(unsigned c, uint64_t ring_base, uint32_t depth) {
    rings_.at(c) = Ring{ring_base, depth, 0};
    mmio_write(soc.sdma.register_address(c, SdmaRegister::kRingBase), ring_base, 8);
    mmio_write(soc.sdma.register_address(c, SdmaRegister::kRingDepth), depth, 4);
}

void Harness::push_raw(unsigned c, const uint8_t raw[kSdmaRequestBytes]) {
    Ring& r = rings_.at(c);
    uncached_write(r.base + uint64_t{r.tail} * kSdmaRequestBytes, raw, kSdmaRequestBytes, now());
    r.tail = (r.tail + 1) % r.depth;
}

void Harness::push_request(unsigned c, const SdmaRequest& req) {
    uint8_t raw[kSdmaRequestBytes];
    req.encode(raw);
    push_raw(c, raw);
}

Tick Harness::ring(unsigned c) { return mmio_write(soc.sdma.doorbell_address(c), rings_.at(c).tail, 4); }

namespace {
// "a=1;b=2" -> {"a=1", "b=2"}
std::vector<std::string> split_assignments(const std::string& text) {
    std::vector<std::string> out;
    size_t start = 0;
    for (size_t end; (end = text.find(';', start)) != std::string::npos; start = end + 1) {
        out.push_back(text.substr(start, end - start));
    }
    out.push_back(text.substr(start));
    return out;
}

std::vector<std::unique_ptr<Harness>>& harnesses() {
    static std::vector<std::unique_ptr<Harness>> all;
    return all;
}
bool elaborated = false;
}  // namespace

Harness& make_harness(const Config& cfg, SocOptions options) {
    if (elaborated) throw std::logic_error("make_harness after elaborate()");
    harnesses().push_back(std::make_unique<Harness>(sc_core::sc_gen_unique_name("harness"), cfg, std::move(options)));
    return *harnesses().back();
}

void elaborate() {
    if (elaborated) return;
    elaborated = true;
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
}

void run_until_idle() { sc_core::sc_start(); }

Config config_with(const std::vector<std::string>& sets) {
    Config cfg = Config::from_preset();
    // A test target may run its tests on the RTL blocks (tests/rtl_in_the_loop.bzl).
    if (const char* extra = std::getenv("PFSIM_TEST_SET")) {
        for (const std::string& s : split_assignments(extra)) cfg.set(s);
    }
    for (const std::string& s : sets) cfg.set(s);
    cfg.validate();
    return cfg;
}

}  // namespace pfsim::test

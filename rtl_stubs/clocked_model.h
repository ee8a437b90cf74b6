// Runs a Verilated model clock by clock on its own time line, optionally dumping
// its signals (VCD or FST, chosen by the file's extension). The time line moves
// forward by one period per cycle, and jumps to a later time when asked, so that
// the waves line up with simulated time and never go backwards.
#pragma once

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <verilated.h>
#include <verilated_fst_c.h>
#include <verilated_vcd_c.h>

#include "model/common/tick.h"
#include "rtl_stubs/waves.h"

namespace pfsim {

template <class Model, class Tracer>
class ClockedModel {
public:
    ClockedModel(const char* name, Tick period, const std::string& waves)
        : context_(std::make_unique<VerilatedContext>()), period_(period) {
        if (!waves.empty()) context_->traceEverOn(true);
        model_ = std::make_unique<Model>(context_.get(), name);
        if (!waves.empty()) {
            tracer_ = std::make_unique<Tracer>();
            model_->trace(tracer_.get(), 99);
            tracer_->set_time_unit("1ps");
            tracer_->set_time_resolution("1ps");
            tracer_->open(waves.c_str());
            if (!tracer_->isOpen()) throw std::runtime_error("cannot write waves file '" + waves + "'");
        }
        model_->clk = 0;
        model_->eval();
    }
    ~ClockedModel() {
        if (tracer_) tracer_->close();
        model_->final();
    }
    ClockedModel(const ClockedModel&) = delete;
    ClockedModel& operator=(const ClockedModel&) = delete;

    Model& pins() { return *model_; }
    const Model& pins() const { return *model_; }
    uint64_t cycles() const { return cycles_; }
    // The next cycle starts no earlier than `t`.
    void advance_to(Tick t) {
        if (t > now_) now_ = t;
    }
    // Propagates inputs set since the last edge to the combinational outputs.
    void settle() { model_->eval(); }
    // One clock cycle: inputs as set now, a rising edge half-way through.
    void cycle() {
        model_->clk = 0;
        model_->eval();
        if (tracer_) tracer_->dump(now_);
        model_->clk = 1;
        model_->eval();
        if (tracer_) tracer_->dump(now_ + period_ / 2);
        now_ += period_;
        ++cycles_;
    }
    // Holds rst_n low for `n` cycles, then releases it.
    void reset(unsigned n) {
        model_->rst_n = 0;
        for (unsigned i = 0; i < n; ++i) cycle();
        model_->rst_n = 1;
        model_->eval();
    }

private:
    std::unique_ptr<VerilatedContext> context_;
    std::unique_ptr<Model> model_;
    std::unique_ptr<Tracer> tracer_;
    Tick period_;
    Tick now_ = 0;
    uint64_t cycles_ = 0;
};

}  // namespace pfsim

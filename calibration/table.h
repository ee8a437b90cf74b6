// The calibration table: the figures `pfsim calibrate` measures, read from
// TOML (calibration/figures.toml is built in; docs/calibration.md, "The
// table", is the format). A figure names its runs as data and computes its
// value and published bounds with expressions over the runs' summaries and the
// configuration.
#pragma once

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace pfsim::calibration {

// A table that cannot be read: the message names the file, the line and the key.
struct TableError : std::runtime_error {
    using std::runtime_error::runtime_error;
};

// What an expression may read: the summaries of its figure's runs (run[N]...),
// and configuration values by key: ps("KEY") a time in picoseconds, hz("KEY")
// a frequency in hertz.
struct Inputs {
    const std::vector<nlohmann::json>* runs = nullptr;
    std::function<double(const std::string&)> ps, hz;
};

// An arithmetic expression: numbers, + - * / with C++'s precedence, left to
// right (so a table's figures compute exactly what the same C++ would),
// parentheses, unary minus, run[N].key.key[I]..., ps("KEY"), hz("KEY"),
// warmup_ms(run[N].warmup) (the milliseconds in "48/48 channels warmed in 4.4 ms").
class Expression {
public:
    Expression() = default;
    // Throws TableError naming `where` and the offending character.
    Expression(const std::string& text, const std::string& where);
    explicit Expression(double constant);
    // Throws std::runtime_error for a summary lacking what it reads ("run summary has no KEY").
    double evaluate(const Inputs& in) const;
    // 1 + the highest N of the run[N] it reads; 0 if it reads no run.
    size_t runs_read() const;
    struct Node;

private:
    std::shared_ptr<const Node> root_;
};

// One run a figure needs: a shipped case (or case file) with its arguments,
// sets and warm-up, or a generated trace to replay (working_set:MIB,
// same_line, pointer_chase).
struct FigureRun {
    std::string target;  // the case; empty for a trace
    std::vector<std::string> args, sets;  // NAME=VALUE, KEY=VALUE, in the table's order
    bool warmup = true;
    std::string trace;
};

struct Figure {
    std::string id, what, unit, source;
    Expression low, high, value;
    std::vector<FigureRun> runs;
    std::string known_gap;  // empty: out of tolerance is a failure
    std::string where;      // FILE:LINE of its [[figure]]
};

// The figures of `text` (the contents of `file`), in order. Throws TableError
// for a missing or unknown key, a value of the wrong type, a repeated id, an
// expression that does not parse, or a run that names neither a case nor a
// trace (or both).
std::vector<Figure> read_table(const std::string& text, const std::string& file);

}  // namespace pfsim::calibration

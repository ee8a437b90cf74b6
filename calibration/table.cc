#include "calibration/table.h"

#include <cctype>
#include <cstdlib>
#include <set>
#include <variant>

#include <toml++/toml.h>

#include "base/toml_text.h"

namespace pfsim::calibration {

struct Expression::Node {
    enum Kind { Number, Add, Subtract, Multiply, Divide, Negate, RunField, Ps, Hz, WarmupMs } kind;
    double number = 0;
    std::shared_ptr<const Node> left, right;            // operands; WarmupMs reads `left`
    size_t run = 0;                                     // RunField: run[run]
    std::vector<std::variant<std::string, size_t>> path;  // RunField: .key and [index] steps
    std::string key;                                    // Ps, Hz

    // The field of run[run] that `path` names; `name` is set to the path's text.
    const nlohmann::json& field(const Inputs& in, std::string& name) const {
        if (!in.runs || run >= in.runs->size()) throw std::runtime_error("no run " + std::to_string(run));
        const nlohmann::json* j = &(*in.runs)[run];
        for (const auto& step : path) {
            if (const std::string* k = std::get_if<std::string>(&step)) {
                name += (name.empty() ? "" : ".") + *k;
                if (!j->is_object() || !j->contains(*k)) throw std::runtime_error("run summary has no " + name);
                j = &(*j)[*k];
            } else {
                const size_t i = std::get<size_t>(step);
                name += "[" + std::to_string(i) + "]";
                if (!j->is_array() || j->size() <= i) throw std::runtime_error("run summary has no " + name);
                j = &(*j)[i];
            }
        }
        return *j;
    }

    double value(const Inputs& in) const {
        switch (kind) {
        case Number: return number;
        case Add: return left->value(in) + right->value(in);
        case Subtract: return left->value(in) - right->value(in);
        case Multiply: return left->value(in) * right->value(in);
        case Divide: return left->value(in) / right->value(in);
        case Negate: return -left->value(in);
        case RunField: {
            std::string name;
            const nlohmann::json& j = field(in, name);
            if (!j.is_number()) throw std::runtime_error("run summary's " + name + " is not a number");
            return j.get<double>();
        }
        case Ps: return in.ps(key);
        case Hz: return in.hz(key);
        case WarmupMs: {
            std::string name;
            const nlohmann::json& j = left->field(in, name);
            const std::string s = j.is_string() ? j.get<std::string>() : "";
            const size_t at = s.find(" in ");
            if (at == std::string::npos) throw std::runtime_error("run summary's warm-up '" + s + "' gives no time");
            return std::stod(s.substr(at + 4));
        }
        }
        return 0;
    }

    size_t runs_read() const {
        size_t n = kind == RunField ? run + 1 : 0;
        for (const auto& operand : {left, right}) {
            if (operand) n = std::max(n, operand->runs_read());
        }
        return n;
    }
};

namespace {

using Node = Expression::Node;
using NodePtr = std::shared_ptr<const Node>;

// Recursive descent over one expression's text.
class Parser {
public:
    Parser(const std::string& text, const std::string& where) : s_(text), where_(where) {}

    NodePtr whole() {
        NodePtr e = sum();
        skip_space();
        if (i_ != s_.size()) fail("unexpected '" + s_.substr(i_, 1) + "'");
        return e;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw TableError(where_ + ": '" + s_ + "': " + what + " at character " + std::to_string(i_ + 1));
    }
    void skip_space() {
        while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
    }
    bool take(char c) {
        skip_space();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!take(c)) fail(std::string("expected '") + c + "'");
    }
    static NodePtr binary(Node::Kind k, NodePtr l, NodePtr r) {
        auto n = std::make_shared<Node>();
        n->kind = k;
        n->left = std::move(l);
        n->right = std::move(r);
        return n;
    }
    NodePtr sum() {
        NodePtr e = product();
        for (;;) {
            if (take('+')) e = binary(Node::Add, e, product());
            else if (take('-')) e = binary(Node::Subtract, e, product());
            else return e;
        }
    }
    NodePtr product() {
        NodePtr e = unary();
        for (;;) {
            if (take('*')) e = binary(Node::Multiply, e, unary());
            else if (take('/')) e = binary(Node::Divide, e, unary());
            else return e;
        }
    }
    NodePtr unary() {
        if (take('-')) return binary(Node::Negate, unary(), nullptr);
        return primary();
    }
    std::string word() {
        skip_space();
        const size_t start = i_;
        while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
        return s_.substr(start, i_ - start);
    }
    size_t index() {
        skip_space();
        const size_t start = i_;
        while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
        if (start == i_) fail("expected an index");
        if (i_ - start > 6) fail("an index of more than 6 digits");
        const size_t v = std::stoull(s_.substr(start, i_ - start));
        expect(']');
        return v;
    }
    NodePtr number() {
        const size_t start = i_;
        while (i_ < s_.size() && (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.')) ++i_;
        if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
            ++i_;
            if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
            const size_t digits = i_;
            while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) ++i_;
            if (digits == i_) fail("an exponent without digits");
        }
        const std::string text = s_.substr(start, i_ - start);
        char* end = nullptr;
        auto n = std::make_shared<Node>();
        n->kind = Node::Number;
        n->number = std::strtod(text.c_str(), &end);
        if (end != text.c_str() + text.size()) fail("'" + text + "' is not a number");
        return n;
    }
    std::string quoted() {
        expect('"');
        const size_t start = i_;
        while (i_ < s_.size() && s_[i_] != '"') ++i_;
        if (i_ == s_.size()) fail("an unterminated string");
        return s_.substr(start, i_++ - start);
    }
    NodePtr run_field() {
        auto n = std::make_shared<Node>();
        n->kind = Node::RunField;
        expect('[');
        n->run = index();
        for (;;) {
            if (i_ < s_.size() && s_[i_] == '.') {
                ++i_;
                const std::string k = word();
                if (k.empty()) fail("expected a key after '.'");
                n->path.emplace_back(k);
            } else if (i_ < s_.size() && s_[i_] == '[') {
                ++i_;
                n->path.emplace_back(index());
            } else {
                break;
            }
        }
        if (n->path.empty()) fail("run[" + std::to_string(n->run) + "] needs a key");
        return n;
    }
    NodePtr primary() {
        skip_space();
        if (i_ == s_.size()) fail("expected a value");
        if (std::isdigit(static_cast<unsigned char>(s_[i_])) || s_[i_] == '.') return number();
        if (take('(')) {
            NodePtr e = sum();
            expect(')');
            return e;
        }
        const size_t start = i_;
        const std::string name = word();
        if (name == "run") return run_field();
        auto n = std::make_shared<Node>();
        if (name == "ps" || name == "hz") {
            n->kind = name == "ps" ? Node::Ps : Node::Hz;
            expect('(');
            n->key = quoted();
            expect(')');
            return n;
        }
        if (name == "warmup_ms") {
            n->kind = Node::WarmupMs;
            expect('(');
            if (word() != "run") fail("warmup_ms reads a run's field: warmup_ms(run[N].warmup)");
            n->left = run_field();
            expect(')');
            return n;
        }
        i_ = start;
        fail(name.empty() ? "expected a value" : "unknown name '" + name + "' (known: run, ps, hz, warmup_ms)");
    }

    const std::string& s_;
    const std::string& where_;
    size_t i_ = 0;
};

std::string line_of(const std::string& file, const toml::node& n) {
    return file + ":" + std::to_string(n.source().begin.line);
}

// One TOML table's keys, each read once; what is left over is unknown.
class Keys {
public:
    Keys(const std::string& file, const toml::table& t, std::string what, std::set<std::string> known)
        : file_(file), table_(t), what_(std::move(what)), known_(std::move(known)) {
        for (const auto& [k, v] : t) {
            if (!known_.count(std::string(k.str()))) {
                std::string list;
                for (const std::string& name : known_) list += (list.empty() ? "" : ", ") + name;
                throw TableError(line_of(file_, v) + ": " + what_ + ": unknown key '" + std::string(k.str()) +
                                 "' (known: " + list + ")");
            }
        }
    }
    std::string where(const std::string& key) const {
        const toml::node* n = table_.get(key);
        return (n ? line_of(file_, *n) : file_ + ":" + std::to_string(table_.source().begin.line)) + ": " + what_ +
               ": " + key;
    }
    const toml::node* get(const std::string& key, bool required) const {
        const toml::node* n = table_.get(key);
        if (!n && required) throw TableError(where(key) + ": missing");
        return n;
    }
    std::string text(const std::string& key, bool required = true) const {
        const toml::node* n = get(key, required);
        if (!n) return "";
        if (!n->is_string()) throw TableError(where(key) + ": must be a string");
        return n->as_string()->get();
    }
    Expression expression(const std::string& key) const {
        const toml::node* n = get(key, true);
        if (n->is_integer() || n->is_floating_point()) return Expression(n->value<double>().value());
        if (!n->is_string()) throw TableError(where(key) + ": must be a number or an expression");
        return Expression(n->as_string()->get(), where(key));
    }
    std::vector<std::string> strings(const std::string& key) const {
        std::vector<std::string> out;
        const toml::node* n = get(key, false);
        if (!n) return out;
        const toml::array* a = n->as_array();
        if (!a) throw TableError(where(key) + ": must be an array of strings");
        for (const toml::node& e : *a) {
            if (!e.is_string()) throw TableError(where(key) + ": must be an array of strings");
            out.push_back(e.as_string()->get());
        }
        return out;
    }
    void name(std::string what) { what_ = std::move(what); }

private:
    const std::string& file_;
    const toml::table& table_;
    std::string what_;
    std::set<std::string> known_;
};

FigureRun read_run(const std::string& file, const toml::table& t, const std::string& what) {
    const Keys k(file, t, what, {"case", "trace", "args", "sets", "warmup"});
    FigureRun r;
    r.target = k.text("case", false);
    r.trace = k.text("trace", false);
    if (r.target.empty() == r.trace.empty()) {
        throw TableError(k.where("case") + ": a run names a case or a trace, one of them");
    }
    r.args = k.strings("args");
    r.sets = k.strings("sets");
    if (const toml::node* w = k.get("warmup", false)) {
        if (!w->is_boolean()) throw TableError(k.where("warmup") + ": must be true or false");
        r.warmup = w->as_boolean()->get();
    }
    if (!r.trace.empty() && (!r.args.empty() || !r.sets.empty() || !r.warmup)) {
        throw TableError(k.where("trace") + ": a replayed trace takes no args, sets or warmup");
    }
    return r;
}

}  // namespace

Expression::Expression(const std::string& text, const std::string& where) : root_(Parser(text, where).whole()) {}

Expression::Expression(double constant) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Number;
    n->number = constant;
    root_ = n;
}

double Expression::evaluate(const Inputs& in) const {
    if (!root_) throw std::logic_error("an empty calibration expression");
    return root_->value(in);
}

std::vector<Figure> read_table(const std::string& text, const std::string& file) {
    if (const std::string problem = toml_text_problem(text); !problem.empty()) {
        throw TableError(file + ":" + problem);
    }
    toml::table doc;
    try {
        doc = toml::parse(text, file);
    } catch (const toml::parse_error& e) {
        throw TableError(file + ":" + std::to_string(e.source().begin.line) + ": " + std::string(e.description()));
    }
    for (const auto& [k, v] : doc) {
        if (k.str() != "figure") throw TableError(line_of(file, v) + ": unknown key '" + std::string(k.str()) + "' (known: figure)");
    }
    const toml::array* list = doc["figure"].as_array();
    if (!list) throw TableError(file + ": no [[figure]]");
    std::vector<Figure> figures;
    std::set<std::string> ids;
    for (const toml::node& n : *list) {
        const toml::table* t = n.as_table();
        if (!t) throw TableError(line_of(file, n) + ": figure: must be a table");
        Keys named(file, *t, "figure", {"id", "what", "unit", "source", "low", "high", "runs", "value", "known_gap"});
        Figure f;
        f.where = line_of(file, n);
        f.id = named.text("id");
        named.name("figure " + f.id);
        if (!ids.insert(f.id).second) throw TableError(named.where("id") + ": a second figure of this id");
        f.what = named.text("what");
        f.unit = named.text("unit");
        f.source = named.text("source");
        f.known_gap = named.text("known_gap", false);
        f.low = named.expression("low");
        f.high = named.expression("high");
        f.value = named.expression("value");
        const toml::node* runs = named.get("runs", true);
        const toml::array* a = runs->as_array();
        if (!a || a->empty()) throw TableError(named.where("runs") + ": must be an array of at least one run");
        for (const toml::node& r : *a) {
            if (!r.is_table()) throw TableError(named.where("runs") + ": each run is a table");
            f.runs.push_back(read_run(file, *r.as_table(), "figure " + f.id + ": runs"));
        }
        if (f.low.runs_read() || f.high.runs_read()) {
            throw TableError(named.where(f.low.runs_read() ? "low" : "high") + ": the published bounds read no run");
        }
        if (f.value.runs_read() > f.runs.size()) {
            throw TableError(named.where("value") + ": reads run[" + std::to_string(f.value.runs_read() - 1) +
                             "] of " + std::to_string(f.runs.size()) + " runs");
        }
        figures.push_back(std::move(f));
    }
    return figures;
}

size_t Expression::runs_read() const { return root_ ? root_->runs_read() : 0; }

}  // namespace pfsim::calibration

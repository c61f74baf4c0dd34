// Expression graphs and their compilation into the flat program every backend reads
// (ew_internal/program.hpp). Typing happens as nodes are built, so a wrong placeholder
// fails where it is written; merging, ordering and the register plan happen once, in
// compile_program, so that calling a Kernel costs no analysis.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>

#include "ew/error.hpp"
#include "ew/expr.hpp"
#include "ew_internal/element_eval.hpp"
#include "ew_internal/program.hpp"

namespace ew {

namespace detail {

struct ExprNode {
  Opcode op;
  DType dtype;
  bool weak;  // a plain number not yet typed by an operand: takes the dtype it meets
  // A typed node here or below (an input, a param, a cast, a typed constant, or arithmetic on
  // them). A weak node with one is not a number: a select of numbers on a typed condition,
  // or arithmetic of numbers on one; its value is known only where it runs.
  bool typed_below = false;
  int slot = 0;
  int height = 1;  // longest path to a leaf: bounds every recursive walk of the graph
  double value = 0;
  std::shared_ptr<const ExprNode> arg[3];
};

namespace {

using NodePtr = std::shared_ptr<const ExprNode>;

std::uint64_t bits_of(double v) {
  std::uint64_t bits;
  std::memcpy(&bits, &v, sizeof bits);
  return bits;
}

constexpr const char* opcode_names[opcode_count] = {
    "input", "param", "const", "cast", "neg", "abs", "sqrt", "floor", "ceil", "trunc", "round", "exp",
    "log", "tanh", "sigmoid", "add", "sub", "mul", "div", "min", "max", "lt", "le", "gt", "ge", "eq", "ne",
    "fma", "select"};

const NodePtr& need(const Expr& e, const char* what) {
  if (e.empty()) throw Error(Errc::invalid_argument, std::string(what) + ": an operand is an empty ew::Expr");
  return e.node();
}

// A number as a node of dtype d holds it: rounded to d's compute dtype (f32 for the 16-bit
// types, as inductor keeps a Python scalar met by half data in the f32 "opmath" type).
double round_to(DType d, double v) {
  return compute_dtype(d) == DType::f32 ? static_cast<double>(static_cast<float>(v)) : v;
}

// Refusing depth here, where the graph is built, keeps compiling, printing and destroying
// an expression (all recursive) within a bounded stack.
NodePtr make(Opcode op, DType dtype, bool weak, NodePtr a = {}, NodePtr b = {}, NodePtr c = {}) {
  auto n = std::make_shared<ExprNode>();
  n->op = op, n->dtype = dtype, n->weak = weak;
  n->arg[0] = std::move(a), n->arg[1] = std::move(b), n->arg[2] = std::move(c);
  n->typed_below = !weak;
  for (const auto& arg : n->arg)
    if (arg) n->height = std::max(n->height, arg->height + 1), n->typed_below = n->typed_below || arg->typed_below;
  if (n->height > max_expr_nodes)
    throw Error(Errc::invalid_argument, std::string("ew::Expr: ") + to_string(op) + " would make an expression " +
                                            std::to_string(n->height) + " nodes deep, at most " +
                                            std::to_string(max_expr_nodes));
  return n;
}

void need_dtype(DType d, const char* what) {
  if (d != DType::f32 && d != DType::f64 && d != DType::f16 && d != DType::bf16)
    throw Error(Errc::invalid_argument, std::string(what) + ": dtype " + std::to_string(static_cast<int>(d)) +
                                            " is not a DType (f32, f64, f16 or bf16)");
}

// Promotion of two typed operands (torch's): a dtype with itself stays; f64 wins; f32 over
// a 16-bit type; f16 with bf16 meet in f32, which holds both exactly.
DType wider(DType a, DType b) {
  if (a == b) return a;
  if (a == DType::f64 || b == DType::f64) return DType::f64;
  return DType::f32;
}

// The dtype arithmetic on these operands computes in: typed operands decide by promotion;
// weak numbers follow. All weak: stays weak (f64).
std::pair<DType, bool> common_type(std::initializer_list<const ExprNode*> operands) {
  bool any_typed = false;
  DType d = DType::f32;
  for (const ExprNode* n : operands)
    if (!n->weak) d = any_typed ? wider(d, n->dtype) : n->dtype, any_typed = true;
  return any_typed ? std::make_pair(d, false) : std::make_pair(DType::f64, true);
}

// The f64 value of an expression of numbers only (weak, nothing typed below), as the
// reference would compute it. `known` holds the nodes already valued, so that a shared node
// is valued once (a graph that doubles itself d times has 2^d paths).
double weak_value(const ExprNode* n, std::unordered_map<const ExprNode*, double>& known) {
  if (n->op == Opcode::constant) return n->value;
  const auto found = known.find(n);
  if (found != known.end()) return found->second;
  double v[3] = {0, 0, 0};
  for (int k = 0; k < arity(n->op); ++k) v[k] = weak_value(n->arg[k].get(), known);
  const double value = n->op == Opcode::select ? (v[0] != 0.0 ? v[1] : v[2]) : apply_instr<double>(n->op, v[0], v[1], v[2]);
  return known[n] = value;
}
double weak_value(const ExprNode* n) {
  std::unordered_map<const ExprNode*, double> known;
  return weak_value(n, known);
}

NodePtr convert(const NodePtr& n, DType to);

// A weak graph with a typed node below (a select of numbers on a typed condition, and
// arithmetic of numbers on it) meeting a 16-bit operand: made again in that dtype node by
// node, so that its numbers are rounded to f32 as numbers meeting 16-bit data are, and its
// arithmetic runs in f32 as the 16-bit nodes it joins do; a select's condition keeps its own
// dtype. (Folded into one number, as an expression of numbers alone is, it lost its inputs.)
// `made` holds the nodes already made, so that a shared node is made once.
NodePtr retype16(const NodePtr& n, DType to, std::unordered_map<const ExprNode*, NodePtr>& made) {
  if (!n->weak || !n->typed_below) return convert(n, to);
  const auto found = made.find(n.get());
  if (found != made.end()) return found->second;
  NodePtr a[3];
  for (int k = 0; k < arity(n->op); ++k)
    a[k] = n->op == Opcode::select && k == 0 ? n->arg[0] : retype16(n->arg[k], to, made);
  return made[n.get()] = make(n->op, to, false, a[0], a[1], a[2]);
}

// An operand brought to `to`: weak numbers are re-made in that dtype (rounded once);
// typed operands of another dtype get an explicit cast node. An expression of numbers
// meeting a 16-bit operand becomes its value rounded to f32, as a number does (a cast
// node would round it to 16 bits); a weak graph with a typed node below is made again in
// that type (retype16).
NodePtr convert(const NodePtr& n, DType to) {
  if (n->dtype == to) return n;
  if (n->weak && n->typed_below && is_storage16(to)) {
    std::unordered_map<const ExprNode*, NodePtr> made;
    return retype16(n, to, made);
  }
  const bool number = n->weak && (n->op == Opcode::constant || is_storage16(to));
  if (number) {
    auto c = make(Opcode::constant, to, false);
    std::const_pointer_cast<ExprNode>(c)->value = round_to(to, n->op == Opcode::constant ? n->value : weak_value(n.get()));
    return c;
  }
  return make(Opcode::cast, to, false, n);
}

Expr unary(Opcode op, const Expr& a, const char* what) {
  const NodePtr& x = need(a, what);
  return Expr(make(op, x->dtype, x->weak, x));
}

Expr binary(Opcode op, const Expr& a, const Expr& b, const char* what) {
  const NodePtr &x = need(a, what), &y = need(b, what);
  auto [d, weak] = common_type({x.get(), y.get()});
  return Expr(make(op, d, weak, convert(x, d), convert(y, d)));
}

}  // namespace

const char* to_string(Opcode op) noexcept { return opcode_names[static_cast<int>(op)]; }

int arity(Opcode op) noexcept {
  if (op <= Opcode::constant) return 0;
  if (op <= Opcode::sigmoid) return 1;
  if (op <= Opcode::ne) return 2;
  return 3;
}

namespace {

// Structural key of an instruction: identical keys compute identical values.
using Key = std::tuple<int, int, int, int, int, int, std::uint64_t>;

class Compiler {
 public:
  Program run(const std::vector<Expr>& outputs) {
    if (outputs.empty()) throw Error(Errc::invalid_argument, "ew::compile: no outputs");
    if (outputs.size() > static_cast<std::size_t>(max_expr_outputs))
      throw Error(Errc::invalid_argument, "ew::compile: " + std::to_string(outputs.size()) +
                                              " outputs, at most " + std::to_string(max_expr_outputs));
    p_.input_dtype.assign(max_expr_inputs, DType::f32);
    p_.input_read.assign(max_expr_inputs, false);
    p_.param_dtype.assign(max_expr_params, DType::f32);
    param_seen_.assign(max_expr_params, false);
    for (std::size_t k = 0; k < outputs.size(); ++k) {
      if (outputs[k].empty())
        throw Error(Errc::invalid_argument, "ew::compile: output " + std::to_string(k) + " is an empty ew::Expr");
      NodePtr root = outputs[k].node();
      if (root->weak) root = convert(root, DType::f64);  // a plain number as an output: f64
      p_.outputs.push_back(emit(root.get()));
    }
    p_.input_dtype.resize(p_.input_slots);
    p_.input_read.resize(p_.input_slots);
    p_.param_dtype.resize(p_.param_slots);
    plan_registers();
    write_canonical();
    return std::move(p_);
  }

 private:
  std::uint16_t emit(const ExprNode* n) {
    if (auto it = done_.find(n); it != done_.end()) return it->second;
    Instr in{};
    in.op = n->op;
    in.dtype = n->dtype;
    const int k = arity(n->op);
    for (int i = 0; i < k; ++i) in.arg[i] = emit(n->arg[i].get());
    if (n->op == Opcode::input) {
      in.slot = static_cast<std::uint16_t>(n->slot);
      if (p_.input_read[n->slot] && p_.input_dtype[n->slot] != n->dtype)
        throw Error(Errc::invalid_argument, "ew::compile: input " + std::to_string(n->slot) + " is read as " +
                                                to_string(p_.input_dtype[n->slot]) + " and as " +
                                                to_string(n->dtype));
      p_.input_read[n->slot] = true;
      p_.input_dtype[n->slot] = n->dtype;
      p_.input_slots = std::max(p_.input_slots, n->slot + 1);
    } else if (n->op == Opcode::param) {
      in.slot = static_cast<std::uint16_t>(n->slot);
      if (param_seen_[n->slot] && p_.param_dtype[n->slot] != n->dtype)
        throw Error(Errc::invalid_argument, "ew::compile: param " + std::to_string(n->slot) + " is read as " +
                                                to_string(p_.param_dtype[n->slot]) + " and as " +
                                                to_string(n->dtype));
      param_seen_[n->slot] = true;
      p_.param_dtype[n->slot] = n->dtype;
      p_.param_slots = std::max(p_.param_slots, n->slot + 1);
    } else if (n->op == Opcode::constant) {
      in.value = n->value;
    }
    const Key key{static_cast<int>(in.op), static_cast<int>(in.dtype), in.arg[0], in.arg[1], in.arg[2], in.slot,
                  bits_of(in.value)};
    std::uint16_t index;
    if (auto it = merged_.find(key); it != merged_.end()) {
      index = it->second;
    } else {
      if (p_.code.size() >= static_cast<std::size_t>(max_expr_nodes))
        throw Error(Errc::invalid_argument, "ew::compile: the expression has more than " +
                                                std::to_string(max_expr_nodes) + " distinct nodes");
      index = static_cast<std::uint16_t>(p_.code.size());
      p_.code.push_back(in);
      merged_.emplace(key, index);
    }
    done_.emplace(n, index);
    return index;
  }

  // Linear scan: a register is free again after the last instruction that reads it.
  // f32 and f64 inputs need none (evaluators read memory), 16-bit ones hold their block
  // widened; params and constants keep theirs for the whole call (filled once per call);
  // outputs keep theirs until the block is stored.
  void plan_registers() {
    const std::size_t count = p_.code.size();
    std::vector<std::size_t> last_use(count, 0);
    for (std::size_t i = 0; i < count; ++i) {
      last_use[i] = i;
      for (int a = 0; a < arity(p_.code[i].op); ++a) last_use[p_.code[i].arg[a]] = i;
    }
    for (std::uint16_t o : p_.outputs) last_use[o] = count;
    std::vector<std::uint16_t> free_regs;
    std::vector<std::vector<std::uint16_t>> release_at(count + 1);
    int next = 0;
    for (std::size_t i = 0; i < count; ++i) {
      Instr& in = p_.code[i];
      if (in.op == Opcode::input && !is_storage16(in.dtype)) {
        in.reg = 0xffff;
        continue;
      }
      const bool pinned = in.op == Opcode::param || in.op == Opcode::constant;
      if (!pinned && !free_regs.empty()) {
        in.reg = free_regs.back();
        free_regs.pop_back();
      } else {
        in.reg = static_cast<std::uint16_t>(next++);
      }
      if (!pinned) release_at[last_use[i]].push_back(in.reg);
      // Operands released at this instruction become free only for later ones: an
      // instruction never writes the register it is reading.
      for (std::uint16_t r : release_at[i]) free_regs.push_back(r);
    }
    p_.registers = next;
  }

  void write_canonical() {
    char line[96];
    for (const Instr& in : p_.code) {
      int len = std::snprintf(line, sizeof line, "%s.%s", to_string(in.op), ew::to_string(in.dtype));
      if (in.op == Opcode::input || in.op == Opcode::param) len += std::snprintf(line + len, sizeof line - len, " %d", in.slot);
      else if (in.op == Opcode::constant && std::isnan(in.value))
        // %a writes every NaN as "nan" or "-nan": two constants differing in payload would
        // share a text (the cuda backend's cache key) but not their bits.
        len += std::snprintf(line + len, sizeof line - len, " nan:%016llx",
                             static_cast<unsigned long long>(bits_of(in.value)));
      else if (in.op == Opcode::constant) len += std::snprintf(line + len, sizeof line - len, " %a", in.value);
      for (int a = 0; a < arity(in.op); ++a) len += std::snprintf(line + len, sizeof line - len, " %%%d", in.arg[a]);
      p_.canonical.append(line, static_cast<std::size_t>(len)).push_back('\n');
    }
    p_.canonical += "out";
    for (std::uint16_t o : p_.outputs) p_.canonical += " %" + std::to_string(o);
    p_.canonical.push_back('\n');
  }

  Program p_;
  std::vector<bool> param_seen_;
  std::unordered_map<const ExprNode*, std::uint16_t> done_;
  std::map<Key, std::uint16_t> merged_;
};

}  // namespace

Program compile_program(const std::vector<Expr>& outputs) { return Compiler().run(outputs); }

}  // namespace detail

using detail::make;
using detail::Opcode;

Expr::Expr(double constant) {
  auto n = make(Opcode::constant, DType::f64, true);
  std::const_pointer_cast<detail::ExprNode>(n)->value = constant;
  node_ = std::move(n);
}

DType Expr::dtype() const { return detail::need(*this, "ew::Expr::dtype")->dtype; }

std::string Expr::str() const { return detail::compile_program({*this}).canonical; }

namespace {

Expr leaf(Opcode op, int k, DType dtype, int limit, const char* what) {
  detail::need_dtype(dtype, what);
  if (k < 0 || k >= limit)
    throw Error(Errc::invalid_argument, std::string(what) + " index " + std::to_string(k) + " is outside 0.." +
                                            std::to_string(limit - 1));
  auto n = make(op, dtype, false);
  std::const_pointer_cast<detail::ExprNode>(n)->slot = k;
  return Expr(std::move(n));
}

}  // namespace

Expr input(int k, DType dtype) { return leaf(Opcode::input, k, dtype, max_expr_inputs, "ew::input"); }
Expr param(int k, DType dtype) { return leaf(Opcode::param, k, dtype, max_expr_params, "ew::param"); }

// A cast number is typed: cast<double>(0.1) widens an f32 operand as an f64 input would;
// cast<half>(0.1) is 0.1 rounded once to f16.
// A cast to a 16-bit type rounds (the only place besides an output's store that does):
// a node of that dtype holds an f32 value that need not be representable, so the cast
// stays unless the value is one already (an input, a param or a cast of that dtype).
Expr cast(const Expr& e, DType to) {
  const auto& x = detail::need(e, "ew::cast");
  detail::need_dtype(to, "ew::cast");
  if (x->weak && x->op == Opcode::constant) {
    auto typed = detail::make(Opcode::constant, to, false);
    std::const_pointer_cast<detail::ExprNode>(typed)->value = detail::round_to_storage(to, x->value);
    return Expr(std::move(typed));
  }
  if (x->weak && x->dtype == to) {  // numbers combined (f64): now typed
    auto typed = std::make_shared<detail::ExprNode>(*x);
    typed->weak = false, typed->typed_below = true;
    return Expr(std::move(typed));
  }
  if (is_storage16(to)) {
    const bool representable = x->dtype == to && (x->op == Opcode::input || x->op == Opcode::param || x->op == Opcode::cast);
    return representable ? e : Expr(detail::make(Opcode::cast, to, false, x));
  }
  return Expr(detail::convert(x, to));
}

Expr operator-(const Expr& a) { return detail::unary(Opcode::neg, a, "operator-"); }
Expr operator+(const Expr& a, const Expr& b) { return detail::binary(Opcode::add, a, b, "operator+"); }
Expr operator-(const Expr& a, const Expr& b) { return detail::binary(Opcode::sub, a, b, "operator-"); }
Expr operator*(const Expr& a, const Expr& b) { return detail::binary(Opcode::mul, a, b, "operator*"); }
Expr operator/(const Expr& a, const Expr& b) { return detail::binary(Opcode::div, a, b, "operator/"); }
Expr operator<(const Expr& a, const Expr& b) { return detail::binary(Opcode::lt, a, b, "operator<"); }
Expr operator<=(const Expr& a, const Expr& b) { return detail::binary(Opcode::le, a, b, "operator<="); }
Expr operator>(const Expr& a, const Expr& b) { return detail::binary(Opcode::gt, a, b, "operator>"); }
Expr operator>=(const Expr& a, const Expr& b) { return detail::binary(Opcode::ge, a, b, "operator>="); }
Expr operator==(const Expr& a, const Expr& b) { return detail::binary(Opcode::eq, a, b, "operator=="); }
Expr operator!=(const Expr& a, const Expr& b) { return detail::binary(Opcode::ne, a, b, "operator!="); }
Expr min(const Expr& a, const Expr& b) { return detail::binary(Opcode::min, a, b, "ew::min"); }
Expr max(const Expr& a, const Expr& b) { return detail::binary(Opcode::max, a, b, "ew::max"); }

Expr fma(const Expr& a, const Expr& b, const Expr& c) {
  const auto &x = detail::need(a, "ew::fma"), &y = detail::need(b, "ew::fma"), &z = detail::need(c, "ew::fma");
  auto [d, weak] = detail::common_type({x.get(), y.get(), z.get()});
  return Expr(make(Opcode::fma, d, weak, detail::convert(x, d), detail::convert(y, d), detail::convert(z, d)));
}

// The condition keeps its own dtype: only its being zero or not matters.
Expr select(const Expr& condition, const Expr& if_true, const Expr& if_false) {
  const auto& c = detail::need(condition, "ew::select");
  const auto &x = detail::need(if_true, "ew::select"), &y = detail::need(if_false, "ew::select");
  auto [d, weak] = detail::common_type({x.get(), y.get()});
  const auto cond = c->weak ? detail::convert(c, c->dtype) : c;
  return Expr(make(Opcode::select, d, weak, cond, detail::convert(x, d), detail::convert(y, d)));
}

Expr sqrt(const Expr& a) { return detail::unary(Opcode::sqrt, a, "ew::sqrt"); }
Expr abs(const Expr& a) { return detail::unary(Opcode::abs, a, "ew::abs"); }
Expr floor(const Expr& a) { return detail::unary(Opcode::floor, a, "ew::floor"); }
Expr ceil(const Expr& a) { return detail::unary(Opcode::ceil, a, "ew::ceil"); }
Expr trunc(const Expr& a) { return detail::unary(Opcode::trunc, a, "ew::trunc"); }
Expr round(const Expr& a) { return detail::unary(Opcode::round, a, "ew::round"); }
Expr exp(const Expr& a) { return detail::unary(Opcode::exp, a, "ew::exp"); }
Expr log(const Expr& a) { return detail::unary(Opcode::log, a, "ew::log"); }
Expr tanh(const Expr& a) { return detail::unary(Opcode::tanh, a, "ew::tanh"); }
Expr sigmoid(const Expr& a) { return detail::unary(Opcode::sigmoid, a, "ew::sigmoid"); }

Kernel::Kernel(const std::vector<Expr>& outputs)
    : program_(std::make_shared<const detail::Program>(detail::compile_program(outputs))) {}

namespace {
const detail::Program& need_program(const std::shared_ptr<const detail::Program>& p) {
  if (!p) throw Error(Errc::invalid_argument, "ew::Kernel: an empty kernel (default-constructed or moved from)");
  return *p;
}
}  // namespace

int Kernel::inputs() const { return need_program(program_).input_slots; }
int Kernel::params() const { return need_program(program_).param_slots; }
int Kernel::outputs() const { return static_cast<int>(need_program(program_).outputs.size()); }
DType Kernel::output_dtype(int k) const {
  const auto& p = need_program(program_);
  if (k < 0 || k >= static_cast<int>(p.outputs.size()))
    throw Error(Errc::invalid_argument, "ew::Kernel::output_dtype: no output " + std::to_string(k));
  return p.output_dtype(k);
}
std::string Kernel::str() const { return need_program(program_).canonical; }
const detail::Program& Kernel::program() const { return need_program(program_); }

}  // namespace ew

#pragma once
// Your own elementwise formulas, fused into one pass over memory.
//
//   auto x = ew::input<float>(0), y = ew::input<float>(1);
//   auto s = ew::param<float>(0);
//   ew::Kernel k = ew::compile({x * ew::sigmoid(x), ew::fma(s, x, y)});  // two outputs, one pass
//   k(ctx, {xs, ys}, {silu, axpy}, {2.0});
//
// An Expr is a node of a graph built with C++ operators and the functions below. ew::compile
// turns the outputs' graph into one program (typed, common subexpressions merged, registers
// planned) that every backend reads: the scalar reference walks it element by element, the
// CPU backends evaluate it block by block in L1-resident registers. A Kernel is that program:
// calling it does no analysis beyond checking the arguments.
//
// Semantics (docs/expressions.md has the full rules):
// - Every node rounds once, as written; nothing is contracted into an fma unless the
//   expression says ew::fma. An expression equal to one of the seven ops gives its bits.
// - dtypes: inputs and params carry theirs; a node of two operands computes in the wider of
//   the two (f32 widens to f64 exactly); a plain number takes the dtype of the operand it
//   meets (rounded to nearest even); ew::cast<T> converts (f64 -> f32 rounds to nearest even).
// - f16 and bf16 (ew::half, ew::bfloat16): f16 with f16 stays f16, bf16 with bf16 bf16, f16
//   with bf16 is f32, either with f32 f32. A 16-bit node holds an f32 value, computed as f32
//   data is; only a store into a 16-bit output and ew::cast<half>/<bfloat16> round to 16 bits
//   (once, from f64 straight). A plain number meeting 16-bit data is rounded to f32; a 16-bit
//   param is rounded to its type once, at the call.
// - Comparisons give 1 or 0 in their operands' dtype; select(c, a, b) takes a where c != 0
//   (a NaN condition is != 0).
// - min/max: NaN if either operand is NaN (the first one's if both); otherwise the
//   smaller/larger, and the first operand where they compare equal (max(-0, +0) is -0).
// - round is half away from zero (std::round); floor, ceil, trunc as in <cmath>.
// - exp, log, tanh, sigmoid are the library's own, the same bits on every backend.
#include <cstddef>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ew/context.hpp"
#include "ew/span.hpp"
#include "ew/types.hpp"

namespace ew {

namespace detail {
struct ExprNode;
struct Program;
}  // namespace detail

// Limits of one expression (an Error names the one exceeded).
inline constexpr int max_expr_inputs = 16;
inline constexpr int max_expr_params = 8;
inline constexpr int max_expr_outputs = 8;
inline constexpr int max_expr_nodes = 1024;

// A node of an expression graph. Copying shares the node; graphs are immutable.
class Expr {
 public:
  Expr() = default;  // empty: using it in an expression or compiling it is an Error
  Expr(double constant);  // NOLINT: numbers mix with expressions (`x * 2`)
  Expr(float constant) : Expr(static_cast<double>(constant)) {}
  Expr(int constant) : Expr(static_cast<double>(constant)) {}

  bool empty() const noexcept { return !node_; }
  // The node's dtype, once typed. A plain number alone is f64 until it meets a typed operand.
  DType dtype() const;
  // The canonical text of this node's graph (what the program's cache key is made of).
  std::string str() const;

  explicit Expr(std::shared_ptr<const detail::ExprNode> node) : node_(std::move(node)) {}
  const std::shared_ptr<const detail::ExprNode>& node() const noexcept { return node_; }

 private:
  std::shared_ptr<const detail::ExprNode> node_;
};

// Placeholders: input array k (0 <= k < max_expr_inputs) and scalar parameter k
// (0 <= k < max_expr_params), of element type float, double, ew::half or ew::bfloat16.
Expr input(int k, DType dtype);
Expr param(int k, DType dtype);
template <class T> Expr input(int k) { return input(k, dtype_v<T>); }
template <class T> Expr param(int k) { return param(k, dtype_v<T>); }

Expr cast(const Expr& e, DType to);
template <class T> Expr cast(const Expr& e) { return cast(e, dtype_v<T>); }

Expr operator-(const Expr& a);
Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);
Expr operator<(const Expr& a, const Expr& b);
Expr operator<=(const Expr& a, const Expr& b);
Expr operator>(const Expr& a, const Expr& b);
Expr operator>=(const Expr& a, const Expr& b);
Expr operator==(const Expr& a, const Expr& b);
Expr operator!=(const Expr& a, const Expr& b);

Expr fma(const Expr& a, const Expr& b, const Expr& c);  // a*b + c, one rounding
Expr select(const Expr& condition, const Expr& if_true, const Expr& if_false);
inline Expr where(const Expr& c, const Expr& t, const Expr& f) { return select(c, t, f); }
Expr min(const Expr& a, const Expr& b);
Expr max(const Expr& a, const Expr& b);
Expr sqrt(const Expr& a);
Expr abs(const Expr& a);
Expr floor(const Expr& a);
Expr ceil(const Expr& a);
Expr trunc(const Expr& a);
Expr round(const Expr& a);
Expr exp(const Expr& a);
Expr log(const Expr& a);
Expr tanh(const Expr& a);
Expr sigmoid(const Expr& a);  // 1 / (1 + exp(-a))

// A typed, non-owning view of an operand: any Span, ew::Buffer or contiguous container
// of float, double, ew::half or ew::bfloat16 converts to it.
struct InputArray {
  const void* data = nullptr;
  std::size_t size = 0;
  DType dtype = DType::f32;
  MemorySpace space = MemorySpace::unknown;
  int device = -1;  // as Span::device

  InputArray() = default;
  template <class T>
  InputArray(Span<T> s)
      : data(s.data), size(s.size), dtype(dtype_v<std::remove_const_t<T>>), space(s.space), device(s.device) {}
  template <class V, class = decltype(std::declval<V&>().data()), class = decltype(std::declval<V&>().size())>
  InputArray(const V& c) : InputArray(Span<const typename V::value_type>(const_cast<V&>(c))) {}
};

struct OutputArray {
  void* data = nullptr;
  std::size_t size = 0;
  DType dtype = DType::f32;
  MemorySpace space = MemorySpace::unknown;
  int device = -1;  // as Span::device

  OutputArray() = default;
  template <class T, class = std::enable_if_t<!std::is_const_v<T>>>
  OutputArray(Span<T> s) : data(s.data), size(s.size), dtype(dtype_v<T>), space(s.space), device(s.device) {}
  template <class V, class = decltype(std::declval<V&>().data()), class = decltype(std::declval<V&>().size())>
  OutputArray(V& c) : OutputArray(Span<typename V::value_type>(c)) {}
};

// A compiled expression with one or more outputs, evaluated in one pass. Cheap to copy
// (the program is shared); safe to call from several threads on different contexts.
class Kernel {
 public:
  Kernel() = default;
  explicit Kernel(const std::vector<Expr>& outputs);

  // Evaluates every output over n elements. inputs[k] is input k (as many as the largest
  // index the expression reads, plus one; a slot the expression does not read may be
  // empty), params[k] is param k (converted to its dtype). Every output and every input
  // read has the same length n. An output may be exactly an input (in place); outputs
  // never overlap each other. Checked completely before anything is written.
  void operator()(Context& ctx, std::initializer_list<InputArray> inputs, std::initializer_list<OutputArray> outputs,
                  std::initializer_list<double> params = {}) const {
    run(ctx, inputs.begin(), inputs.size(), outputs.begin(), outputs.size(), params.begin(), params.size());
  }
  void run(Context& ctx, const InputArray* inputs, std::size_t input_count, const OutputArray* outputs,
           std::size_t output_count, const double* params, std::size_t param_count) const;

  bool empty() const noexcept { return !program_; }
  int inputs() const;   // input slots the call must pass
  int params() const;   // params the call must pass
  int outputs() const;
  DType output_dtype(int k) const;
  std::string str() const;  // the canonical form: one line per node
  const detail::Program& program() const;

 private:
  std::shared_ptr<const detail::Program> program_;
};

inline Kernel compile(const std::vector<Expr>& outputs) { return Kernel(outputs); }

// One-shot evaluation (compiles each time: keep a Kernel for repeated calls).
inline void evaluate(Context& ctx, const std::vector<Expr>& outputs, std::initializer_list<InputArray> inputs,
                     std::initializer_list<OutputArray> out, std::initializer_list<double> params = {}) {
  compile(outputs)(ctx, inputs, out, params);
}

}  // namespace ew

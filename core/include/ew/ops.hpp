#pragma once
// The one table of operations. Kernels, tests and benchmarks all read it:
// kernels call ew::apply<op>() element by element (or its vector twin, which must
// round identically), tests compare against it bit for bit, benchmarks count bytes
// with bytes_per_element(). Adding an op means one line in each of the three places
// below and a case in every backend's dispatch switch.
//
// Every op is written as out[i] = f(a[i], b[i], s, t) over at most two input
// streams; for the in-place BLAS ops (axpy, axpby) the second stream b is the old y.
// fma rounds once, so triad, axpy and axpby are bit-identical on every backend.
// axpby is defined as fma(s, x, t*y): the product t*y is rounded first.
// f16 and bf16 data compute in f32 as float data does and round once to storage.
#include <cmath>
#include <cstddef>
#include <type_traits>

#include "ew/detail/host_device.hpp"
#include "ew/types.hpp"

namespace ew {

enum class Op { copy, scale, add, mul, triad, axpy, axpby };

struct OpInfo {
  Op op;
  const char* name;
  const char* formula;
  int input_streams;  // distinct arrays read besides an in-place output: 1 (a) or 2 (a, b)
  bool in_place;      // the output is also read (y of axpy/axpby); b then is the output itself
  int scalars;        // 0, 1 (s) or 2 (s, t)

  // Elements moved through memory per output element: each input read once, the
  // output written once. In-place ops read y as their second stream.
  constexpr int elements_moved() const { return input_streams + (in_place ? 1 : 0) + 1; }
  constexpr std::size_t bytes_per_element(DType d) const { return elements_moved() * size_of(d); }
  constexpr bool reads_b() const { return input_streams == 2 || in_place; }
};

inline constexpr OpInfo op_table[] = {
    {Op::copy, "copy", "c = a", 1, false, 0},
    {Op::scale, "scale", "c = s*a", 1, false, 1},
    {Op::add, "add", "c = a + b", 2, false, 0},
    {Op::mul, "mul", "c = a * b", 2, false, 0},
    {Op::triad, "triad", "c = a + s*b  (fma)", 2, false, 1},
    {Op::axpy, "axpy", "y = s*x + y  (fma)", 1, true, 1},
    {Op::axpby, "axpby", "y = s*x + t*y  (fma(s, x, t*y))", 1, true, 2},
};
inline constexpr int op_count = sizeof(op_table) / sizeof(op_table[0]);

constexpr const OpInfo& info(Op op) { return op_table[static_cast<int>(op)]; }
constexpr const char* to_string(Op op) { return info(op).name; }

EW_HOST_DEVICE inline float fused_multiply_add(float x, float y, float z) { return ::fmaf(x, y, z); }
EW_HOST_DEVICE inline double fused_multiply_add(double x, double y, double z) { return ::fma(x, y, z); }

// The scalar definition of every op: the reference each backend must reproduce bit for bit.
template <Op op, class T>
EW_HOST_DEVICE inline T apply(T a, [[maybe_unused]] T b, [[maybe_unused]] T s, [[maybe_unused]] T t) {
  if constexpr (op == Op::copy) return a;
  else if constexpr (op == Op::scale) return s * a;
  else if constexpr (op == Op::add) return a + b;
  else if constexpr (op == Op::mul) return a * b;
  else if constexpr (op == Op::triad) return fused_multiply_add(s, b, a);
  else if constexpr (op == Op::axpy) return fused_multiply_add(s, a, b);
  else return fused_multiply_add(s, a, t * b);  // axpby
}

// 16-bit storage (ew::half, ew::bfloat16): the float op on the exactly widened inputs,
// with float scalars, rounded once to the storage type (nearest even).
template <Op op, class T, std::enable_if_t<is_storage16_v<T>, int> = 0>
EW_HOST_DEVICE inline T apply(T a, T b, float s, float t) {
  return T(apply<op>(static_cast<float>(a), static_cast<float>(b), s, t));
}

// Calls f(std::integral_constant<Op, op>{}) for the run-time op: turns one switch
// into a compile-time op for every backend's kernels.
template <class F>
decltype(auto) dispatch_op(Op op, F&& f);

}  // namespace ew

#include "ew/detail/dispatch_op.hpp"

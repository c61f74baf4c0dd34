#pragma once
// The operations. Each checks its arguments completely before anything is written
// (sizes, null pointers, alignment, partial overlap, memory the backend cannot reach)
// and throws ew::Error naming the offending argument. n = 0 is a no-op.
// When the device fails after the checks (out_of_memory, device_error, device_fatal),
// the inputs are untouched and the output is unspecified: after out_of_memory or
// device_error each element holds its old value or its result, and the context stays
// usable; a failed call leaves nothing running on the caller's host memory
// (docs/gpu.md, "When CUDA fails during a call").
#include "ew/context.hpp"
#include "ew/ops.hpp"
#include "ew/span.hpp"

namespace ew {

namespace detail {
template <class T> struct same { using type = T; };
// Keeps an argument out of template deduction: T comes from the output span alone,
// so `add(ctx, a, b, c)` accepts mutable input spans and `scale(ctx, 2.0, a, c)` a
// double literal for float data.
template <class T> using nd = typename same<T>::type;
}  // namespace detail

// The generic form every named op below forwards to. `b` is the second input stream:
// unused by copy and scale; for axpy and axpby it must be empty (y is `out`).
template <class T>
struct Operands {
  Span<const T> a;
  Span<const T> b;
  Span<T> out;
  T s = T(1);
  T t = T(1);
};

template <class T>
void run(Context& ctx, Op op, const Operands<T>& args);

template <class T>
void copy(Context& ctx, Span<const detail::nd<T>> a, Span<T> c) { run<T>(ctx, Op::copy, {a, {}, c}); }
template <class T>
void scale(Context& ctx, detail::nd<T> s, Span<const detail::nd<T>> a, Span<T> c) { run<T>(ctx, Op::scale, {a, {}, c, s}); }
template <class T>
void add(Context& ctx, Span<const detail::nd<T>> a, Span<const detail::nd<T>> b, Span<T> c) { run<T>(ctx, Op::add, {a, b, c}); }
template <class T>
void mul(Context& ctx, Span<const detail::nd<T>> a, Span<const detail::nd<T>> b, Span<T> c) { run<T>(ctx, Op::mul, {a, b, c}); }
template <class T>
void triad(Context& ctx, Span<const detail::nd<T>> a, detail::nd<T> s, Span<const detail::nd<T>> b, Span<T> c) {
  run<T>(ctx, Op::triad, {a, b, c, s});
}
template <class T>
void axpy(Context& ctx, detail::nd<T> s, Span<const detail::nd<T>> x, Span<T> y) { run<T>(ctx, Op::axpy, {x, {}, y, s}); }
template <class T>
void axpby(Context& ctx, detail::nd<T> s, Span<const detail::nd<T>> x, detail::nd<T> t, Span<T> y) {
  run<T>(ctx, Op::axpby, {x, {}, y, s, t});
}

extern template void run<float>(Context&, Op, const Operands<float>&);
extern template void run<double>(Context&, Op, const Operands<double>&);

}  // namespace ew

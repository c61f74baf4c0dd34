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
// T is float, double, ew::half or ew::bfloat16; the 16-bit types compute in float
// (their scalars are floats) and round the result once (docs/ops.md).
template <class T>
struct Operands {
  Span<const T> a;
  Span<const T> b;
  Span<T> out;
  compute_t<T> s = compute_t<T>(1);
  compute_t<T> t = compute_t<T>(1);
};

template <class T>
void run(Context& ctx, Op op, const Operands<T>& args);

// A scalar's type: T, or float for the 16-bit storage types.
template <class T> using scalar_of = detail::nd<compute_t<T>>;

template <class T>
void copy(Context& ctx, Span<const detail::nd<T>> a, Span<T> c) { run<T>(ctx, Op::copy, {a, {}, c}); }
template <class T>
void scale(Context& ctx, scalar_of<T> s, Span<const detail::nd<T>> a, Span<T> c) { run<T>(ctx, Op::scale, {a, {}, c, s}); }
template <class T>
void add(Context& ctx, Span<const detail::nd<T>> a, Span<const detail::nd<T>> b, Span<T> c) { run<T>(ctx, Op::add, {a, b, c}); }
template <class T>
void mul(Context& ctx, Span<const detail::nd<T>> a, Span<const detail::nd<T>> b, Span<T> c) { run<T>(ctx, Op::mul, {a, b, c}); }
template <class T>
void triad(Context& ctx, Span<const detail::nd<T>> a, scalar_of<T> s, Span<const detail::nd<T>> b, Span<T> c) {
  run<T>(ctx, Op::triad, {a, b, c, s});
}
template <class T>
void axpy(Context& ctx, scalar_of<T> s, Span<const detail::nd<T>> x, Span<T> y) { run<T>(ctx, Op::axpy, {x, {}, y, s}); }
template <class T>
void axpby(Context& ctx, scalar_of<T> s, Span<const detail::nd<T>> x, scalar_of<T> t, Span<T> y) {
  run<T>(ctx, Op::axpby, {x, {}, y, s, t});
}

extern template void run<float>(Context&, Op, const Operands<float>&);
extern template void run<double>(Context&, Op, const Operands<double>&);
extern template void run<half>(Context&, Op, const Operands<half>&);
extern template void run<bfloat16>(Context&, Op, const Operands<bfloat16>&);

// out[i] = in[i] converted to To: exact when To is wider, else rounded once to nearest
// even straight from the source (f64 -> f16 does not pass through f32); NaN stays NaN
// (quiet), ±inf and ±0 stay, overflow gives ±inf (ew/float16.hpp). The same dtype is a
// copy of the bits. Any pair of f32, f64, f16, bf16. `out` is disjoint from `in` or
// exactly the same bytes (same element size). Checked like every op's operands.
// The type-erased form (sizes in elements of each dtype) and the typed one,
// `ew::convert<float, ew::half>(ctx, x, y)`. The devices: as Span::device (the form without
// them says none).
void convert(Context& ctx, DType from, const void* in, std::size_t in_size, MemorySpace in_space, DType to,
             void* out, std::size_t out_size, MemorySpace out_space, int in_device, int out_device);
void convert(Context& ctx, DType from, const void* in, std::size_t in_size, MemorySpace in_space, DType to,
             void* out, std::size_t out_size, MemorySpace out_space);
template <class From, class To>
void convert(Context& ctx, Span<const detail::nd<From>> in, Span<To> out) {
  convert(ctx, dtype_v<From>, in.data, in.size, in.space, dtype_v<To>, out.data, out.size, out.space, in.device,
          out.device);
}

}  // namespace ew

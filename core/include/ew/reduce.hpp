#pragma once
// Reductions with the same bits on every backend, thread count, GPU and alignment:
// sum, asum (sum of magnitudes), dot, norm2 (the 2-norm, scaled so that it neither
// overflows nor underflows), and the smallest or largest element with its index.
//
//   float s = ew::sum<float>(ctx, x);
//   double d = ew::dot<double>(ctx, x, y);
//   ew::Extremum<float> m = ew::max_element<float>(ctx, x);   // m.value, m.index
//
// Every sum is accumulated in double (f32 data too) over a fixed tree of fixed-size
// blocks; docs/reductions.md gives the tree, the error bound against the exact sum and
// why. f32 results are the double result rounded once to float.
//
// 16-bit data (ew::half, ew::bfloat16) reduce exactly as f32 data do (each element
// widened exactly, the same tree in double) and the sums return float, the double result
// rounded once (reduce_result_t: a half sum would overflow at 65504 and give back most of
// the accuracy the accumulation kept; docs/reductions.md, "16-bit data"):
//
//   float s = ew::sum<ew::half>(ctx, h);
//   ew::Extremum<ew::half> m = ew::min_element<ew::half>(ctx, h);   // the 16-bit value itself
//
// Arguments are checked as the ops check theirs (null with n > 0, misaligned, a size
// whose bytes do not fit, memory the backend cannot read, dot's sizes differing), with
// an ew::Error naming the operand. n = 0 gives the identity: 0 for the sums, and for
// min_element/max_element {+inf or -inf, no_index}.
//
// NaN: a sum with a NaN term is NaN (returned as the type's default quiet NaN); the
// extrema return the first NaN and its index when there is one (NaN wins, as in
// numpy's argmin/argmax). Between equal values the lower index wins; +0 and -0 are equal.
//
// The result comes back to the host: on asynchronous backends (cuda) the call waits for
// the work queued before it on the context's stream (the forms with a `result` span below
// do not wait). The cuda backend reads device,
// managed and pinned memory; pageable host memory is Errc::foreign_memory there.
#include <cstddef>
#include <cstdint>

#include "ew/api.hpp"
#include "ew/context.hpp"
#include "ew/float16.hpp"
#include "ew/span.hpp"

namespace ew {

inline constexpr std::size_t no_index = static_cast<std::size_t>(-1);

// What sum, asum, dot and norm2 of T data return (and store): float for the 16-bit
// storage types, T itself for float and double.
template <class T>
using reduce_result_t = compute_t<T>;

template <class T>
struct Extremum {
  T value;
  std::size_t index;  // of the first element holding the winning value; no_index for n = 0
};

template <class T> reduce_result_t<T> sum(Context& ctx, Span<const detail::nd<T>> x);
template <class T> reduce_result_t<T> asum(Context& ctx, Span<const detail::nd<T>> x);
template <class T>
reduce_result_t<T> dot(Context& ctx, Span<const detail::nd<T>> x, Span<const detail::nd<T>> y);
template <class T> reduce_result_t<T> norm2(Context& ctx, Span<const detail::nd<T>> x);
// The same reductions with the value stored into result[0] (one element, in any memory the
// backend can write) instead of returned: on cuda the call only enqueues the work on the
// context's stream and returns at once (no synchronization; the value is there once the
// stream reaches it, e.g. after ctx.synchronize()); CPU backends store it before returning.
// result must not overlap x or y unless it is exactly x[0] or y[0] (read before written).
template <class T> void sum(Context& ctx, Span<const detail::nd<T>> x, Span<reduce_result_t<T>> result);
template <class T> void asum(Context& ctx, Span<const detail::nd<T>> x, Span<reduce_result_t<T>> result);
template <class T>
void dot(Context& ctx, Span<const detail::nd<T>> x, Span<const detail::nd<T>> y, Span<reduce_result_t<T>> result);
template <class T> void norm2(Context& ctx, Span<const detail::nd<T>> x, Span<reduce_result_t<T>> result);

template <class T> Extremum<T> min_element(Context& ctx, Span<const detail::nd<T>> x);
template <class T> Extremum<T> max_element(Context& ctx, Span<const detail::nd<T>> x);

#define EW_REDUCE_EXTERN(T)                                                                \
  extern template reduce_result_t<T> sum<T>(Context&, Span<const T>);                      \
  extern template reduce_result_t<T> asum<T>(Context&, Span<const T>);                     \
  extern template reduce_result_t<T> dot<T>(Context&, Span<const T>, Span<const T>);       \
  extern template reduce_result_t<T> norm2<T>(Context&, Span<const T>);                    \
  extern template Extremum<T> min_element<T>(Context&, Span<const T>);                     \
  extern template Extremum<T> max_element<T>(Context&, Span<const T>);                     \
  extern template void sum<T>(Context&, Span<const T>, Span<reduce_result_t<T>>);          \
  extern template void asum<T>(Context&, Span<const T>, Span<reduce_result_t<T>>);         \
  extern template void dot<T>(Context&, Span<const T>, Span<const T>, Span<reduce_result_t<T>>); \
  extern template void norm2<T>(Context&, Span<const T>, Span<reduce_result_t<T>>);
EW_REDUCE_EXTERN(float)
EW_REDUCE_EXTERN(double)
EW_REDUCE_EXTERN(half)
EW_REDUCE_EXTERN(bfloat16)
#undef EW_REDUCE_EXTERN

}  // namespace ew

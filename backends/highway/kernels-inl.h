// Vector kernels for every op, compiled once per Highway target (see kernels.cc).
// Each vector formula rounds exactly as ew::apply: MulAdd is one rounding only where
// the target has FMA (HWY_NATIVE_FMA); elsewhere the fused ops go element by element
// through std::fma, slower but bit-identical.

// Per-target include guard, as Highway's skeleton-inl.h.
#if defined(EW_HIGHWAY_KERNELS_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EW_HIGHWAY_KERNELS_INL_H_
#undef EW_HIGHWAY_KERNELS_INL_H_
#else
#define EW_HIGHWAY_KERNELS_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "ew/ops.hpp"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ew::detail::highway {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

template <Op op>
constexpr bool is_fused() {
  return op == Op::triad || op == Op::axpy || op == Op::axpby;
}

// The vector twin of ew::apply<op>.
template <Op op, class V>
HWY_INLINE V ApplyVec(V a, [[maybe_unused]] V b, [[maybe_unused]] V s, [[maybe_unused]] V t) {
  if constexpr (op == Op::copy) return a;
  else if constexpr (op == Op::scale) return hn::Mul(s, a);
  else if constexpr (op == Op::add) return hn::Add(a, b);
  else if constexpr (op == Op::mul) return hn::Mul(a, b);
  else if constexpr (op == Op::triad) return hn::MulAdd(s, b, a);
  else if constexpr (op == Op::axpy) return hn::MulAdd(s, a, b);
  else return hn::MulAdd(s, a, hn::Mul(t, b));  // axpby: t*y rounded first
}

template <Op op, class T>
HWY_INLINE void ScalarLoop(std::size_t begin, std::size_t end, const T* a, const T* b, T* out, T s, T t) {
  constexpr bool reads_b = info(op).reads_b();
  for (std::size_t i = begin; i < end; ++i) out[i] = apply<op>(a[i], reads_b ? b[i] : T(0), s, t);
}

// Stores one vector to a vector-aligned address, bypassing the caches or not.
template <bool stream, class D, class V, class T>
HWY_INLINE void StoreAligned(V v, D d, T* HWY_RESTRICT p) {
  if constexpr (stream) hn::Stream(v, d, p);
  else hn::Store(v, d, p);
}

// The vector body over [i, end) with `out + i` vector-aligned; returns where it stopped.
// Inputs may have any element alignment, hence LoadU.
template <Op op, bool stream, class T>
HWY_INLINE std::size_t VectorBody(std::size_t i, std::size_t end, const T* a, const T* b, T* out, T s, T t) {
  constexpr bool reads_b = info(op).reads_b();
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d);
  const auto vs = hn::Set(d, s), vt = hn::Set(d, t);
  auto load_b = [&](std::size_t j) { return reads_b ? hn::LoadU(d, b + j) : hn::Zero(d); };
  // Four vectors per iteration keep several loads in flight for cache-resident sizes.
  for (; i + 4 * N <= end; i += 4 * N) {
    const auto a0 = hn::LoadU(d, a + i), a1 = hn::LoadU(d, a + i + N);
    const auto a2 = hn::LoadU(d, a + i + 2 * N), a3 = hn::LoadU(d, a + i + 3 * N);
    const auto b0 = load_b(i), b1 = load_b(i + N), b2 = load_b(i + 2 * N), b3 = load_b(i + 3 * N);
    StoreAligned<stream>(ApplyVec<op>(a0, b0, vs, vt), d, out + i);
    StoreAligned<stream>(ApplyVec<op>(a1, b1, vs, vt), d, out + i + N);
    StoreAligned<stream>(ApplyVec<op>(a2, b2, vs, vt), d, out + i + 2 * N);
    StoreAligned<stream>(ApplyVec<op>(a3, b3, vs, vt), d, out + i + 3 * N);
  }
  for (; i + N <= end; i += N) StoreAligned<stream>(ApplyVec<op>(hn::LoadU(d, a + i), load_b(i), vs, vt), d, out + i);
  if constexpr (stream) hwy::FlushStream();  // order the non-temporal stores before the caller's next access
  return i;
}

// Scalar head until the output is vector-aligned (aligned stores, and Stream requires
// it), the vector body, then a scalar tail: no masked or partial loads, which 1.0.3
// lacks (LoadN) or makes fault on misaligned pointers (MaskedLoad on SSE4).
template <Op op, class T>
void Chunk(std::size_t n, const T* a, const T* b, T* out, T s, T t, bool stream) {
  if constexpr (is_fused<op>() && !HWY_NATIVE_FMA) {
    ScalarLoop<op>(0, n, a, b, out, s, t);
  } else {
    const hn::ScalableTag<T> d;
    const std::size_t vector_bytes = hn::Lanes(d) * sizeof(T);
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(out) % vector_bytes;
    std::size_t head = misalignment ? (vector_bytes - misalignment) / sizeof(T) : 0;
    if (head > n) head = n;
    ScalarLoop<op>(0, head, a, b, out, s, t);
    const std::size_t done = stream ? VectorBody<op, true>(head, n, a, b, out, s, t)
                                    : VectorBody<op, false>(head, n, a, b, out, s, t);
    ScalarLoop<op>(done, n, a, b, out, s, t);
  }
}

template <class T>
void RunChunk(Op op, std::size_t n, const T* a, const T* b, T* out, T s, T t, bool stream) {
  dispatch_op(op, [&](auto o) { Chunk<decltype(o)::value>(n, a, b, out, s, t, stream); });
}

// Exported per dtype (HWY_EXPORT needs plain functions).
void RunChunkF32(Op op, std::size_t n, const float* a, const float* b, float* out, float s, float t, bool stream) {
  RunChunk(op, n, a, b, out, s, t, stream);
}
void RunChunkF64(Op op, std::size_t n, const double* a, const double* b, double* out, double s, double t,
                 bool stream) {
  RunChunk(op, n, a, b, out, s, t, stream);
}

std::int64_t CurrentTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace ew::detail::highway
HWY_AFTER_NAMESPACE();

#endif  // include guard

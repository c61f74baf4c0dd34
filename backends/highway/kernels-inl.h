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

#include <type_traits>

#include "ew/ops.hpp"
#include "ew_internal/convert_eval.hpp"
#include "float16-inl.h"
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
HWY_INLINE void ScalarLoop(std::size_t begin, std::size_t end, const T* a, const T* b, T* out, compute_t<T> s,
                           compute_t<T> t) {
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

// ---- 16-bit storage: the conversions are in float16-inl.h (the reductions use them too).

#if HWY_TARGET != HWY_SCALAR
// For the ops, a 16-bit vector is split into two float vectors and joined back in an
// order of lanes of its own: the ops are elementwise, so any order that loads and stores
// alike will do. f16 with F16C: lower and upper halves (the instructions convert runs of
// lanes). Otherwise even and odd lanes, which a 32-bit lane reaches with one shift or
// mask; widening for the ops keeps a signaling NaN signaling (the float op or the
// rounding quiets it).
template <class T>
constexpr bool split_in_halves() {
#ifdef EW_HIGHWAY_F16C
  return std::is_same_v<T, half>;
#else
  return false;
#endif
}

template <Op op, class T, class D16>
HWY_INLINE hn::Vec<D16> Apply16(D16 d16, hn::Vec<D16> va, hn::Vec<D16> vb, float s, float t) {
  if constexpr (split_in_halves<T>()) {
    const hn::Half<D16> dh;
    const hn::Rebind<float, decltype(dh)> df;
    const auto vs = hn::Set(df, s), vt = hn::Set(df, t);
    const auto lo = ApplyVec<op>(Widen16<T>(df, hn::LowerHalf(dh, va)), Widen16<T>(df, hn::LowerHalf(dh, vb)), vs, vt);
    const auto hi = ApplyVec<op>(Widen16<T>(df, hn::UpperHalf(dh, va)), Widen16<T>(df, hn::UpperHalf(dh, vb)), vs, vt);
    return hn::Combine(d16, Narrow16<T>(df, hi), Narrow16<T>(df, lo));
  } else {
    const hn::Repartition<float, D16> df;
    const hn::RebindToUnsigned<decltype(df)> du;
    const auto vs = hn::Set(df, s), vt = hn::Set(df, t);
    const auto a32 = hn::BitCast(du, va), b32 = hn::BitCast(du, vb);
    if constexpr (std::is_same_v<T, bfloat16>) {
      const auto high = hn::Set(du, 0xffff0000u);
      const auto even = ApplyVec<op>(hn::BitCast(df, hn::ShiftLeft<16>(a32)), hn::BitCast(df, hn::ShiftLeft<16>(b32)), vs, vt);
      const auto odd = ApplyVec<op>(hn::BitCast(df, hn::And(a32, high)), hn::BitCast(df, hn::And(b32, high)), vs, vt);
      return hn::OddEven(hn::BitCast(d16, NarrowBF16High(df, odd)),
                         hn::BitCast(d16, hn::ShiftRight<16>(NarrowBF16High(df, even))));
    } else {
      const auto low = hn::Set(du, 0xffffu);
      const auto even = ApplyVec<op>(WidenF16Bits(df, hn::And(a32, low)), WidenF16Bits(df, hn::And(b32, low)), vs, vt);
      const auto odd = ApplyVec<op>(WidenF16Bits(df, hn::ShiftRight<16>(a32)), WidenF16Bits(df, hn::ShiftRight<16>(b32)), vs, vt);
      return hn::OddEven(hn::BitCast(d16, hn::ShiftLeft<16>(NarrowF16Bits(df, odd))),
                         hn::BitCast(d16, NarrowF16Bits(df, even)));
    }
  }
}

// How far ahead of its loads the 16-bit loop prefetches its inputs. A 16-bit vector costs
// several times f32's instructions per cache line, so the out-of-order window reaches fewer
// lines ahead than f32's does and fewer misses stay in flight per core: on the 16-core Xeon
// the 16-bit ops moved 20-25 % fewer bytes per second than f32's from memory (2^25..2^26).
// Prefetching 1 KiB ahead closed most of that, 4 KiB all of it (PERFORMANCE.md, 16-bit).
inline constexpr std::size_t prefetch16_bytes = 4096;

// The vector body over [i, end) with `out + i` vector-aligned.
template <Op op, bool stream, class T>
HWY_INLINE std::size_t VectorBody16(std::size_t i, std::size_t end, const T* a, const T* b, T* out, float s,
                                    float t) {
  constexpr bool reads_b = info(op).reads_b();
  const hn::ScalableTag<uint16_t> d16;
  const std::size_t N = hn::Lanes(d16);
  const auto* pa = reinterpret_cast<const uint16_t*>(a);
  const auto* pb = reinterpret_cast<const uint16_t*>(b);
  auto* po = reinterpret_cast<uint16_t*>(out);
  // Addresses past the array are fine to prefetch but not to form as pointers.
  const auto prefetch = [](const uint16_t* p, std::size_t j) {
    hwy::Prefetch(reinterpret_cast<const uint16_t*>(reinterpret_cast<std::uintptr_t>(p) + j * sizeof(uint16_t)));
  };
  constexpr std::size_t ahead = prefetch16_bytes / sizeof(uint16_t);
  for (; i + 2 * N <= end; i += 2 * N) {
    prefetch(pa, i + ahead), prefetch(pa, i + ahead + N);
    if (reads_b) prefetch(pb, i + ahead), prefetch(pb, i + ahead + N);
    const auto a0 = hn::LoadU(d16, pa + i), a1 = hn::LoadU(d16, pa + i + N);
    const auto b0 = reads_b ? hn::LoadU(d16, pb + i) : hn::Zero(d16);
    const auto b1 = reads_b ? hn::LoadU(d16, pb + i + N) : hn::Zero(d16);
    StoreAligned<stream>(Apply16<op, T>(d16, a0, b0, s, t), d16, po + i);
    StoreAligned<stream>(Apply16<op, T>(d16, a1, b1, s, t), d16, po + i + N);
  }
  for (; i + N <= end; i += N) {
    const auto vb = reads_b ? hn::LoadU(d16, pb + i) : hn::Zero(d16);
    StoreAligned<stream>(Apply16<op, T>(d16, hn::LoadU(d16, pa + i), vb, s, t), d16, po + i);
  }
  if constexpr (stream) hwy::FlushStream();
  return i;
}
#endif

template <Op op, class T>
void Chunk16(std::size_t n, const T* a, const T* b, T* out, float s, float t, bool stream) {
#if HWY_TARGET == HWY_SCALAR
  (void)stream;
  ScalarLoop<op>(0, n, a, b, out, s, t);
#else
  if constexpr (is_fused<op>() && !HWY_NATIVE_FMA) {
    ScalarLoop<op>(0, n, a, b, out, s, t);
  } else {
    const std::size_t vector_bytes = hn::Lanes(hn::ScalableTag<uint16_t>()) * sizeof(T);
    const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(out) % vector_bytes;
    std::size_t head = misalignment ? (vector_bytes - misalignment) / sizeof(T) : 0;
    if (head > n) head = n;
    ScalarLoop<op>(0, head, a, b, out, s, t);
    const std::size_t done = stream ? VectorBody16<op, true>(head, n, a, b, out, s, t)
                                    : VectorBody16<op, false>(head, n, a, b, out, s, t);
    ScalarLoop<op>(done, n, a, b, out, s, t);
  }
#endif
}

template <class T>
void RunChunk(Op op, std::size_t n, const T* a, const T* b, T* out, compute_t<T> s, compute_t<T> t, bool stream) {
  if constexpr (is_storage16_v<T>)
    dispatch_op(op, [&](auto o) { Chunk16<decltype(o)::value>(n, a, b, out, s, t, stream); });
  else
    dispatch_op(op, [&](auto o) { Chunk<decltype(o)::value>(n, a, b, out, s, t, stream); });
}

// ---- ew::convert. Vectors for float <-> 16-bit and float <-> double; the other pairs
// element by element (convert_eval.hpp), the same bits.
template <class From, class To>
void ConvertTyped(std::size_t n, const From* in, To* out) {
  std::size_t i = 0;
#if HWY_TARGET != HWY_SCALAR
  if constexpr (std::is_same_v<From, float> && is_storage16_v<To>) {
    const hn::ScalableTag<uint16_t> d16;
    const hn::Half<decltype(d16)> dh;
    const hn::Rebind<float, decltype(dh)> df;
    const std::size_t N = hn::Lanes(d16), half_n = hn::Lanes(df);
    auto* po = reinterpret_cast<uint16_t*>(out);
    for (; i + N <= n; i += N) {
      const auto lo = Narrow16<To>(df, hn::LoadU(df, in + i));
      const auto hi = Narrow16<To>(df, hn::LoadU(df, in + i + half_n));
      hn::StoreU(hn::Combine(d16, hi, lo), d16, po + i);
    }
  } else if constexpr (is_storage16_v<From> && std::is_same_v<To, float>) {
    const hn::ScalableTag<uint16_t> d16;
    const hn::Half<decltype(d16)> dh;
    const hn::Rebind<float, decltype(dh)> df;
    const std::size_t N = hn::Lanes(d16), half_n = hn::Lanes(df);
    const auto* pi = reinterpret_cast<const uint16_t*>(in);
    for (; i + N <= n; i += N) {
      const auto v = hn::LoadU(d16, pi + i);
      hn::StoreU(Widen16<From>(df, hn::LowerHalf(dh, v)), df, out + i);
      hn::StoreU(Widen16<From>(df, hn::UpperHalf(dh, v)), df, out + i + half_n);
    }
  } else if constexpr (std::is_same_v<From, double> && std::is_same_v<To, float>) {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const std::size_t N = hn::Lanes(dd);
    for (; i + N <= n; i += N) hn::StoreU(hn::DemoteTo(df, hn::LoadU(dd, in + i)), df, out + i);
  } else if constexpr (std::is_same_v<From, float> && std::is_same_v<To, double>) {
    const hn::ScalableTag<double> dd;
    const hn::Rebind<float, decltype(dd)> df;
    const std::size_t N = hn::Lanes(dd);
    for (; i + N <= n; i += N) hn::StoreU(hn::PromoteTo(dd, hn::LoadU(df, in + i)), dd, out + i);
  }
#endif
  convert_loop<From, To>(n - i, in + i, out + i);
}

// Exported per dtype (HWY_EXPORT needs plain functions).
void RunChunkF16(Op op, std::size_t n, const half* a, const half* b, half* out, float s, float t, bool stream) {
  RunChunk(op, n, a, b, out, s, t, stream);
}
void RunChunkBF16(Op op, std::size_t n, const bfloat16* a, const bfloat16* b, bfloat16* out, float s, float t,
                  bool stream) {
  RunChunk(op, n, a, b, out, s, t, stream);
}
void ConvertChunk(DType from, DType to, std::size_t n, const void* in, void* out) {
  dispatch_dtype(from, [&](auto f) {
    using From = decltype(f);
    dispatch_dtype(to, [&](auto t) {
      using To = decltype(t);
      ConvertTyped<From, To>(n, static_cast<const From*>(in), static_cast<To*>(out));
    });
  });
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

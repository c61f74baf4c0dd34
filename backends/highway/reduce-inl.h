// Vector reductions, compiled once per Highway target (see reduce.cc). A block's 32
// lanes (ew_internal/reduce_plan.hpp) are 32 / N vectors of N doubles: lane j is vector
// j / N, element j % N, and each vector adds one row of the block at a time, so every
// lane adds its elements in index order as the plan says. Terms are computed in the same
// operations, rounded the same way, as the plan's scalar terms (no MulAdd: multiply,
// then add), so every target gives the reference bits.

// Per-target include guard, as Highway's skeleton-inl.h.
#if defined(EW_HIGHWAY_REDUCE_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EW_HIGHWAY_REDUCE_INL_H_
#undef EW_HIGHWAY_REDUCE_INL_H_
#else
#define EW_HIGHWAY_REDUCE_INL_H_
#endif

#include <cstddef>
#include <cstdint>

#include "ew_internal/reduce_plan.hpp"
#include "float16-inl.h"
#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ew::detail::highway {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;
using plan::Kind;

// At most 32 doubles a vector: N divides the lane count on every target.
using D64 = hn::CappedTag<double, plan::lanes>;
// How far ahead a row is prefetched, where the caller asks for it (reduce.cc says where).
constexpr std::size_t prefetch_bytes = 2048;

template <class T>
HWY_INLINE hn::Vec<D64> LoadAsDouble(const T* p) {
  const D64 d;
  if constexpr (sizeof(T) == 8) {
    return hn::LoadU(d, p);
  } else if constexpr (is_storage16_v<T>) {
    // 16-bit data: widened exactly to float (ew::convert's code), then to double.
    const hn::Rebind<float, D64> df;
    const hn::Rebind<uint16_t, D64> d16;
    return hn::PromoteTo(d, Widen16<T>(df, hn::LoadU(d16, reinterpret_cast<const uint16_t*>(p))));
  } else {
    const hn::Rebind<float, D64> df;
    return hn::PromoteTo(d, hn::LoadU(df, p));
  }
}

// The term(s) of one vector of elements: acc[c] += term for accumulator c.
template <Kind kind, class T, bool medium_only, class V>
HWY_INLINE void AddTerms(V v, V u, V& a0, V& a1, V& a2) {
  const D64 d;
  if constexpr (kind == Kind::sum) {
    a0 = hn::Add(a0, v);
  } else if constexpr (kind == Kind::asum) {
    a0 = hn::Add(a0, hn::Abs(v));
  } else if constexpr (kind == Kind::dot) {
    a0 = hn::Add(a0, hn::Mul(v, u));
  } else if constexpr (sizeof(T) != 8) {  // norm2 of f32 and 16-bit data: exact squares
    a0 = hn::Add(a0, hn::Mul(v, v));
  } else if constexpr (medium_only) {  // see BlocksPartials; a0 collects the values that need scaling
    const auto a = hn::Abs(v);
    a0 = hn::Or(a0, hn::VecFromMask(d, hn::Or(hn::Gt(a, hn::Set(d, plan::tbig)), hn::Lt(a, hn::Set(d, plan::tsml)))));
    a1 = hn::Add(a1, hn::Mul(v, v));
  } else {  // norm2 of f64: Blue's three accumulators, the others get +0 (no change)
    const auto a = hn::Abs(v);
    const auto big = hn::Gt(a, hn::Set(d, plan::tbig));
    const auto small = hn::Lt(a, hn::Set(d, plan::tsml));
    const auto vb = hn::Mul(v, hn::Set(d, plan::sbig));
    const auto vs = hn::Mul(v, hn::Set(d, plan::ssml));
    const auto medium = hn::Not(hn::Or(big, small));
    a0 = hn::Add(a0, hn::IfThenElseZero(small, hn::Mul(vs, vs)));
    a1 = hn::Add(a1, hn::IfThenElseZero(medium, hn::Mul(v, v)));
    a2 = hn::Add(a2, hn::IfThenElseZero(big, hn::Mul(vb, vb)));
  }
}

// One block's partials: `rows` full rows of 32 by vectors, then `rest` (< 32) elements
// of the last row by the plan's scalar terms into the same lanes. The 32 / N lane vectors
// stay in registers (arrays of vectors: not on targets with scalable vectors, where they
// live in memory).
// With medium_only, returns false (and the partials are not to be used) when a value of the
// block needs Blue's scaling.
template <Kind kind, class T, bool medium_only = false, bool prefetch = false>
HWY_INLINE bool BlockPartials(const T* x, const T* y, std::size_t count, double* out) {
  const D64 d;
  using V = hn::Vec<D64>;
  constexpr int w = kind == Kind::norm2 && sizeof(T) == 8 ? 3 : 1;
  HWY_ALIGN double acc[3 * plan::lanes];
  const std::size_t rows = count / plan::lanes, rest = count % plan::lanes;
#if HWY_HAVE_SCALABLE
  const std::size_t N = hn::Lanes(d);
  for (std::size_t j = 0; j < 3 * plan::lanes; j += N) hn::Store(hn::Zero(d), d, acc + j);
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t j = 0; j < plan::lanes; j += N) {
      V a0 = hn::Load(d, acc + j), a1 = hn::Load(d, acc + plan::lanes + j), a2 = hn::Load(d, acc + 2 * plan::lanes + j);
      AddTerms<kind, T, medium_only>(LoadAsDouble(x + r * plan::lanes + j),
                        kind == Kind::dot ? LoadAsDouble(y + r * plan::lanes + j) : hn::Zero(d), a0, a1, a2);
      hn::Store(a0, d, acc + j);
      hn::Store(a1, d, acc + plan::lanes + j);
      hn::Store(a2, d, acc + 2 * plan::lanes + j);
    }
#else
  constexpr std::size_t N = hn::MaxLanes(D64());
  constexpr std::size_t K = plan::lanes / N;
  V a0[K], a1[K], a2[K];
  for (std::size_t k = 0; k < K; ++k) a0[k] = a1[k] = a2[k] = hn::Zero(d);
  for (std::size_t r = 0; r < rows; ++r) {
    const T* xr = x + r * plan::lanes;
    const T* yr = kind == Kind::dot ? y + r * plan::lanes : nullptr;
    if constexpr (prefetch)
      for (std::size_t line = 0; line < plan::lanes * sizeof(T); line += 64) {
        hwy::Prefetch(reinterpret_cast<const char*>(xr) + prefetch_bytes + line);
        if (kind == Kind::dot) hwy::Prefetch(reinterpret_cast<const char*>(yr) + prefetch_bytes + line);
      }
    for (std::size_t k = 0; k < K; ++k)
      AddTerms<kind, T, medium_only>(LoadAsDouble(xr + k * N), kind == Kind::dot ? LoadAsDouble(yr + k * N) : hn::Zero(d), a0[k],
                        a1[k], a2[k]);
  }
#if HWY_TARGET != HWY_SCALAR
  if constexpr (w == 1 && N >= 2) {
    // A full row set: the lane tree's first levels in registers. Adjacent lanes are a
    // tree node's children; ConcatEven/ConcatOdd of two neighbouring vectors line up
    // the left and right children of one level, in order, so one Add computes N nodes
    // of the next level. The last N nodes (N a power of two: a complete tree, as the
    // plan's) the same way within one vector, whose halves then hold the same nodes.
    if (rest == 0) {
      for (std::size_t m = K; m > 1; m /= 2)
        for (std::size_t k = 0; k < m / 2; ++k)
          a0[k] = hn::Add(hn::ConcatEven(d, a0[2 * k + 1], a0[2 * k]), hn::ConcatOdd(d, a0[2 * k + 1], a0[2 * k]));
      V v = a0[0];
      for (std::size_t m = N; m > 1; m /= 2) v = hn::Add(hn::ConcatEven(d, v, v), hn::ConcatOdd(d, v, v));
      out[0] = hn::GetLane(v);
      return true;
    }
  }
#endif
  for (std::size_t k = 0; k < K; ++k) {
    hn::Store(a0[k], d, acc + k * N);
    hn::Store(a1[k], d, acc + plan::lanes + k * N);
    hn::Store(a2[k], d, acc + 2 * plan::lanes + k * N);
  }
#endif
  const T* xr = x + rows * plan::lanes;
  for (std::size_t j = 0; j < rest; ++j) {
    const double v = static_cast<double>(xr[j]);
    if constexpr (kind == Kind::sum) acc[j] = plan::add(acc[j], plan::term_sum(v));
    else if constexpr (kind == Kind::asum) acc[j] = plan::add(acc[j], plan::term_asum(v));
    else if constexpr (kind == Kind::dot)
      acc[j] = plan::add(acc[j], plan::term_dot(v, static_cast<double>(y[rows * plan::lanes + j])));
    else if constexpr (w == 1) acc[j] = plan::add(acc[j], plan::term_square(v));
    else {
      const int c = plan::norm2_class(v);
      if (medium_only && c != 1) return false;
      acc[c * plan::lanes + j] = plan::add(acc[c * plan::lanes + j], plan::norm2_term(v, c));
    }
  }
  if constexpr (medium_only) {
    // acc[0..32) holds the flags (all-ones bits where a value needs scaling), not sums.
    for (std::size_t j = 0; j < plan::lanes; ++j)
      if (acc[j] != 0.0 || acc[j] != acc[j]) return false;
    for (std::size_t j = 0; j < plan::lanes; ++j) acc[j] = 0.0;
  }
  for (int c = 0; c < w; ++c) out[c] = plan::pair_tree(acc + c * plan::lanes, plan::lanes);
  return true;
}

// Partials of blocks [first, last) of an n-element reduction, block b at partials[b w]; with
// `prefetch`, each row's lines are prefetched prefetch_bytes ahead.
template <Kind kind, class T>
void BlocksPartials(const T* x, const T* y, std::size_t n, std::size_t first, std::size_t last, double* partials,
                    bool prefetch) {
  constexpr int w = kind == Kind::norm2 && sizeof(T) == 8 ? 3 : 1;
  for (std::size_t b = first; b < last; ++b) {
    const std::size_t begin = b * plan::block_elements;
    const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
    // The 2-norm of f64 data: first as if no value needed Blue's scaling (medium squares
    // only, the values that do flagged on the side); then the small and big accumulators
    // would only have got +0, which leaves them +0, so the bits are the plan's at a third
    // of the work. A block with a value to scale is done again in full.
    if constexpr (w == 3)
      if (BlockPartials<kind, T, true>(x + begin, nullptr, count, partials + b * w)) continue;
    if (prefetch) BlockPartials<kind, T, false, true>(x + begin, y ? y + begin : nullptr, count, partials + b * w);
    else BlockPartials<kind, T>(x + begin, y ? y + begin : nullptr, count, partials + b * w);
  }
}

template <class T>
void BlocksPartialsAny(Kind kind, const T* x, const T* y, std::size_t n, std::size_t first, std::size_t last,
                       double* partials, bool prefetch) {
  switch (kind) {
    case Kind::sum: return BlocksPartials<Kind::sum, T>(x, y, n, first, last, partials, prefetch);
    case Kind::asum: return BlocksPartials<Kind::asum, T>(x, y, n, first, last, partials, prefetch);
    case Kind::dot: return BlocksPartials<Kind::dot, T>(x, y, n, first, last, partials, prefetch);
    default: return BlocksPartials<Kind::norm2, T>(x, y, n, first, last, partials, prefetch);
  }
}

// min/max of one block: a vector pass for the extreme value (NaN looked for on the
// side: Min/Max of NaN differ between targets), then the first index holding it (the
// block is in L1 by then). A block with a NaN is scanned for its first NaN.
template <bool is_min, class T>
HWY_INLINE void BlockExtremum(const T* x, std::size_t count, double* value, std::uint64_t* index) {
  const hn::ScalableTag<T> d;
  const std::size_t N = hn::Lanes(d);
  const std::size_t body = count / N * N;
  if (body == 0) return plan::reference_extremum(is_min, x, count, value, index);
  auto m = hn::LoadU(d, x);
  auto nan = hn::Not(hn::Eq(m, m));  // Ne is ordered on x86: false for NaN
  for (std::size_t i = N; i < body; i += N) {
    const auto v = hn::LoadU(d, x + i);
    m = is_min ? hn::Min(m, v) : hn::Max(m, v);
    nan = hn::Or(nan, hn::Not(hn::Eq(v, v)));
  }
  bool tail_nan = false;
  for (std::size_t i = body; i < count; ++i) tail_nan |= x[i] != x[i];
  if (tail_nan || !hn::AllFalse(d, nan)) {
    for (std::size_t i = 0; i < count; ++i)
      if (x[i] != x[i]) {
        *value = static_cast<double>(x[i]);
        *index = i;
        return;
      }
  }
  HWY_ALIGN T lanes_of_m[HWY_MAX_BYTES / sizeof(T)];
  hn::Store(m, d, lanes_of_m);
  T best = lanes_of_m[0];
  for (std::size_t j = 1; j < N; ++j) best = is_min ? (lanes_of_m[j] < best ? lanes_of_m[j] : best)
                                                  : (lanes_of_m[j] > best ? lanes_of_m[j] : best);
  for (std::size_t i = body; i < count; ++i) best = is_min ? (x[i] < best ? x[i] : best) : (x[i] > best ? x[i] : best);
  const auto target = hn::Set(d, best);
  std::size_t at = count;
  for (std::size_t i = 0; i < body; i += N) {
    const intptr_t k = hn::FindFirstTrue(d, hn::Eq(hn::LoadU(d, x + i), target));
    if (k >= 0) {
      at = i + static_cast<std::size_t>(k);
      break;
    }
  }
  for (std::size_t i = body; at == count && i < count; ++i)
    if (x[i] == best) at = i;
  *value = static_cast<double>(x[at]);
  *index = at;
}

// A 16-bit block widened exactly into floats (an L1-resident copy): its extremum is the
// float block's, value and index (the widening keeps order, equality and NaN; the value
// returned is the widened element, as the plan's static_cast<double> of it gives).
template <class T>
HWY_INLINE const float* Widened(const T* x, std::size_t count, float* out) {
  const hn::ScalableTag<float> df;
  const hn::Rebind<uint16_t, decltype(df)> d16;
  const std::size_t N = hn::Lanes(df);
  const auto* p = reinterpret_cast<const uint16_t*>(x);
  std::size_t i = 0;
  for (; i + N <= count; i += N) hn::Store(Widen16<T>(df, hn::LoadU(d16, p + i)), df, out + i);
  for (; i < count; ++i) out[i] = static_cast<float>(x[i]);
  return out;
}

template <class T>
void BlocksExtremum(bool is_min, const T* x, std::size_t n, std::size_t first, std::size_t last, double* values,
                    std::uint64_t* indices) {
  for (std::size_t b = first; b < last; ++b) {
    const std::size_t begin = b * plan::block_elements;
    const std::size_t count = n - begin < plan::block_elements ? n - begin : plan::block_elements;
    if constexpr (is_storage16_v<T>) {
      HWY_ALIGN float wide[plan::block_elements];
      const float* w = Widened(x + begin, count, wide);
      if (is_min)
        BlockExtremum<true>(w, count, values + b, indices + b);
      else
        BlockExtremum<false>(w, count, values + b, indices + b);
    } else if (is_min) {
      BlockExtremum<true>(x + begin, count, values + b, indices + b);
    } else {
      BlockExtremum<false>(x + begin, count, values + b, indices + b);
    }
    indices[b] += begin;
  }
}

void ReducePartialsF32(Kind kind, const float* x, const float* y, std::size_t n, std::size_t first,
                      std::size_t last, double* partials, bool prefetch) {
  BlocksPartialsAny<float>(kind, x, y, n, first, last, partials, prefetch);
}
void ReducePartialsF64(Kind kind, const double* x, const double* y, std::size_t n, std::size_t first,
                      std::size_t last, double* partials, bool prefetch) {
  BlocksPartialsAny<double>(kind, x, y, n, first, last, partials, prefetch);
}
void ReducePartialsF16(Kind kind, const half* x, const half* y, std::size_t n, std::size_t first,
                      std::size_t last, double* partials, bool prefetch) {
  BlocksPartialsAny<half>(kind, x, y, n, first, last, partials, prefetch);
}
void ReducePartialsBF16(Kind kind, const bfloat16* x, const bfloat16* y, std::size_t n, std::size_t first,
                       std::size_t last, double* partials, bool prefetch) {
  BlocksPartialsAny<bfloat16>(kind, x, y, n, first, last, partials, prefetch);
}
void ExtremumBlocksF16(bool is_min, const half* x, std::size_t n, std::size_t first, std::size_t last,
                       double* values, std::uint64_t* indices) {
  BlocksExtremum<half>(is_min, x, n, first, last, values, indices);
}
void ExtremumBlocksBF16(bool is_min, const bfloat16* x, std::size_t n, std::size_t first, std::size_t last,
                        double* values, std::uint64_t* indices) {
  BlocksExtremum<bfloat16>(is_min, x, n, first, last, values, indices);
}
void ExtremumBlocksF32(bool is_min, const float* x, std::size_t n, std::size_t first, std::size_t last,
                       double* values, std::uint64_t* indices) {
  BlocksExtremum<float>(is_min, x, n, first, last, values, indices);
}
void ExtremumBlocksF64(bool is_min, const double* x, std::size_t n, std::size_t first, std::size_t last,
                       double* values, std::uint64_t* indices) {
  BlocksExtremum<double>(is_min, x, n, first, last, values, indices);
}

}  // namespace HWY_NAMESPACE
}  // namespace ew::detail::highway
HWY_AFTER_NAMESPACE();

#endif  // EW_HIGHWAY_REDUCE_INL_H_

// The arithmetic kit of ew/detail/math.hpp for Highway vectors, compiled once per target:
// HighwayKit<D> for a descriptor D of float or double lanes. Every operation rounds as
// the scalar kit's does, so ew::math::exp<HighwayKit<D>> and the others give the scalar
// reference's bits on every target. Where the target has no FMA (HWY_NATIVE_FMA == 0:
// SSSE3, SSE4, the emulated targets) MulAdd is a multiply and an add, two roundings; the
// kit's fma then goes lane by lane through std::fma instead (slow, and exact).
//
// The algorithms are ew::math::HWY_NAMESPACE::exp<HighwayKit<D>>(v) (log, tanh, sigmoid,
// round, min, max alike): ew/detail/math.hpp, defined again in each target's section so
// that GCC compiles them with that target's instructions.

// Per-target include guard, as Highway's skeleton-inl.h.
#if defined(EW_HIGHWAY_MATH_KIT_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EW_HIGHWAY_MATH_KIT_INL_H_
#undef EW_HIGHWAY_MATH_KIT_INL_H_
#else
#define EW_HIGHWAY_MATH_KIT_INL_H_
#endif

#include <cmath>
#include <cstddef>

#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
#define EW_MATH_PER_HIGHWAY_TARGET
#include "ew/detail/math.hpp"
#undef EW_MATH_PER_HIGHWAY_TARGET

namespace ew::detail::highway {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

template <class D>
struct HighwayKit {
  using T = hn::TFromD<D>;
  using V = hn::Vec<D>;
  using M = hn::Mask<D>;
  using DI = hn::RebindToSigned<D>;
  using I = hn::Vec<DI>;

  static HWY_INLINE V splat(T c) { return hn::Set(D(), c); }
  static HWY_INLINE I splat_int(long long c) { return hn::Set(DI(), static_cast<hn::TFromD<DI>>(c)); }

  static HWY_INLINE V add(V a, V b) { return hn::Add(a, b); }
  static HWY_INLINE V sub(V a, V b) { return hn::Sub(a, b); }
  static HWY_INLINE V mul(V a, V b) { return hn::Mul(a, b); }
  static HWY_INLINE V div(V a, V b) { return hn::Div(a, b); }
  static HWY_INLINE V fma(V a, V b, V c) {
#if HWY_NATIVE_FMA
    return hn::MulAdd(a, b, c);
#else
    const D d;
    HWY_ALIGN T x[hn::MaxLanes(d)], y[hn::MaxLanes(d)], z[hn::MaxLanes(d)];
    hn::Store(a, d, x);
    hn::Store(b, d, y);
    hn::Store(c, d, z);
    for (std::size_t i = 0; i < hn::Lanes(d); ++i) x[i] = std::fma(x[i], y[i], z[i]);
    return hn::Load(d, x);
#endif
  }
  static HWY_INLINE V neg(V a) { return hn::Neg(a); }
  static HWY_INLINE V abs(V a) { return hn::Abs(a); }
  static HWY_INLINE V sqrt(V a) { return hn::Sqrt(a); }
#if HWY_TARGET > HWY_SSE4
  // Highway 1.0.3 emulates these on SSSE3 (through integers) and on EMU128 and SCALAR (bit
  // tricks), where trunc(-0.3) and floor(-0.0) come out +0 and ceil(+0.0) -0. Each gives a
  // result of the operand's sign (NaN aside, returned as it is), so copying the sign mends it.
  static HWY_INLINE V floor(V a) { return hn::CopySign(hn::Floor(a), a); }
  static HWY_INLINE V ceil(V a) { return hn::CopySign(hn::Ceil(a), a); }
  static HWY_INLINE V trunc(V a) { return hn::CopySign(hn::Trunc(a), a); }
  static HWY_INLINE V rint(V a) { return hn::CopySign(hn::Round(a), a); }  // Round: ties to even
#else
  static HWY_INLINE V floor(V a) { return hn::Floor(a); }
  static HWY_INLINE V ceil(V a) { return hn::Ceil(a); }
  static HWY_INLINE V trunc(V a) { return hn::Trunc(a); }
  static HWY_INLINE V rint(V a) { return hn::Round(a); }  // Highway's Round: ties to even
#endif

  static HWY_INLINE M lt(V a, V b) { return hn::Lt(a, b); }
  static HWY_INLINE M le(V a, V b) { return hn::Le(a, b); }
  static HWY_INLINE M gt(V a, V b) { return hn::Gt(a, b); }
  static HWY_INLINE M ge(V a, V b) { return hn::Ge(a, b); }
  static HWY_INLINE M eq(V a, V b) { return hn::Eq(a, b); }
  // Not hn::Ne: in Highway 1.0.3 it is false for NaN operands on AVX2 and AVX3
  // (_CMP_NEQ_OQ) and true on SSE4 (cmpneq); C++'s != is true.
  static HWY_INLINE M ne(V a, V b) { return hn::Not(hn::Eq(a, b)); }
  static HWY_INLINE M isnan(V a) { return hn::IsNaN(a); }
  static HWY_INLINE V select(M m, V yes, V no) { return hn::IfThenElse(m, yes, no); }
  static HWY_INLINE M mask_and(M a, M b) { return hn::And(a, b); }
  static HWY_INLINE M mask_or(M a, M b) { return hn::Or(a, b); }
  static HWY_INLINE M mask_not(M a) { return hn::Not(a); }

  static HWY_INLINE I bits(V a) { return hn::BitCast(DI(), a); }
  static HWY_INLINE V from_bits(I a) { return hn::BitCast(D(), a); }
  static HWY_INLINE I iadd(I a, I b) { return hn::Add(a, b); }  // wraps
  static HWY_INLINE I isub(I a, I b) { return hn::Sub(a, b); }
  static HWY_INLINE I iand(I a, I b) { return hn::And(a, b); }
  static HWY_INLINE I shl(I a, int n) { return hn::ShiftLeftSame(a, n); }
  static HWY_INLINE I shr(I a, int n) { return hn::ShiftRightSame(a, n); }  // signed lanes: arithmetic
  static HWY_INLINE I to_int(V a) { return hn::ConvertTo(DI(), a); }
  static HWY_INLINE V to_float(I a) { return hn::ConvertTo(D(), a); }
};

}  // namespace HWY_NAMESPACE
}  // namespace ew::detail::highway
HWY_AFTER_NAMESPACE();

#endif  // include guard

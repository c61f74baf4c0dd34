// Exact 16-bit <-> float conversions on vectors, compiled once per Highway target (the
// ops and ew::convert in kernels-inl.h, the reductions in reduce-inl.h).

// Per-target include guard, as Highway's skeleton-inl.h.
#if defined(EW_HIGHWAY_FLOAT16_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EW_HIGHWAY_FLOAT16_INL_H_
#undef EW_HIGHWAY_FLOAT16_INL_H_
#else
#define EW_HIGHWAY_FLOAT16_INL_H_
#endif

#include <cstdint>

#include <type_traits>

#include "ew/float16.hpp"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace ew::detail::highway {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

// ---- 16-bit storage. Each conversion is written once from integer operations (and one
// exact float addition), so every target gives the bits of ew/float16.hpp: Highway
// 1.0.3's own f16 conversions round and handle inf/NaN only where F16C does them (AVX2
// and up, which use it here too), and its bf16 DemoteTo truncates.

// Defined for this target alone: foreach_target.h includes this header once per target,
// the static (baseline) target last.
#undef EW_HIGHWAY_F16C
#if HWY_TARGET <= HWY_AVX2 && !defined(HWY_DISABLE_F16C)
#define EW_HIGHWAY_F16C 1
#endif

// f16 bits (in the low 16 bits of each u32 lane) to float: exact, a NaN made quiet.
template <class DF, class VU>
HWY_INLINE hn::Vec<DF> WidenF16Bits(DF df, VU bits) {
  const hn::RebindToSigned<DF> di;
  const auto w = hn::BitCast(di, bits);
  const auto sign = hn::ShiftLeft<16>(hn::And(w, hn::Set(di, 0x8000)));
  const auto em = hn::And(w, hn::Set(di, 0x7fff));
  const auto normal = hn::Add(hn::ShiftLeft<13>(em), hn::Set(di, 0x38000000));
  const auto inf_nan = hn::Or(hn::Or(hn::ShiftLeft<13>(em), hn::Set(di, 0x7f800000)),
                              hn::IfThenElseZero(hn::Gt(em, hn::Set(di, 0x7c00)), hn::Set(di, 0x400000)));
  // Subnormals and zero: the fraction times 2^-24, exact in float.
  const auto sub = hn::BitCast(di, hn::Mul(hn::ConvertTo(df, em), hn::Set(df, 1.0f / 16777216.0f)));
  const auto magnitude = hn::IfThenElse(hn::Gt(em, hn::Set(di, 0x7bff)), inf_nan,
                                        hn::IfThenElse(hn::Lt(em, hn::Set(di, 0x400)), sub, normal));
  return hn::BitCast(df, hn::Or(magnitude, sign));
}

// Float to f16 bits (in the low 16 bits of each i32 lane), rounded to nearest even.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToSigned<DF>> NarrowF16Bits(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const hn::RebindToSigned<DF> di;
  const auto bits = hn::BitCast(du, v);
  const auto a = hn::BitCast(di, hn::And(bits, hn::Set(du, 0x7fffffffu)));
  const auto sign16 = hn::And(hn::ShiftRight<16>(hn::BitCast(di, bits)), hn::Set(di, 0x8000));
  // Normal results: rebias, round to nearest even at bit 13.
  const auto normal = hn::ShiftRight<13>(hn::Add(hn::Add(hn::Sub(a, hn::Set(di, 0x38000000)), hn::Set(di, 0xfff)),
                                                 hn::And(hn::ShiftRight<13>(a), hn::Set(di, 1))));
  // Subnormal results: adding 0.5 rounds |x| to a multiple of 2^-24, nearest even.
  const auto sub = hn::Sub(hn::BitCast(di, hn::Add(hn::BitCast(df, a), hn::Set(df, 0.5f))), hn::Set(di, 0x3f000000));
  const auto inf_nan = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x7f800000)),
                                      hn::Or(hn::Set(di, 0x7e00), hn::And(hn::ShiftRight<13>(a), hn::Set(di, 0x3ff))),
                                      hn::Set(di, 0x7c00));
  const auto r = hn::IfThenElse(hn::Gt(a, hn::Set(di, 0x477fefff)), inf_nan,
                                hn::IfThenElse(hn::Lt(a, hn::Set(di, 0x38800000)), sub, normal));
  return hn::Or(r, sign16);
}

// Float to bf16, rounded to nearest even: the result in the HIGH 16 bits of each lane
// (the low bits are left over), a NaN made quiet with its sign and top payload bits.
template <class DF>
HWY_INLINE hn::Vec<hn::RebindToUnsigned<DF>> NarrowBF16High(DF df, hn::Vec<DF> v) {
  const hn::RebindToUnsigned<DF> du;
  const auto bits = hn::BitCast(du, v);
  const auto lsb = hn::And(hn::ShiftRight<16>(bits), hn::Set(du, 1u));
  const auto rounded = hn::Add(hn::Add(bits, hn::Set(du, 0x7fffu)), lsb);
  (void)df;
  return hn::IfThenElse(hn::RebindMask(du, hn::IsNaN(v)), hn::Or(bits, hn::Set(du, 0x400000u)), rounded);
}

// The 16-bit vector of one f32 vector's lanes, for ew::convert and the reductions.
template <class DF>
using Bits16 = hn::Vec<hn::Rebind<uint16_t, DF>>;

template <class T, class DF>
HWY_INLINE hn::Vec<DF> Widen16(DF df, Bits16<DF> bits) {
  const hn::RebindToUnsigned<DF> du;
  if constexpr (std::is_same_v<T, bfloat16>) {
    const auto f = hn::BitCast(df, hn::ShiftLeft<16>(hn::PromoteTo(du, bits)));
    return hn::IfThenElse(hn::IsNaN(f), hn::Or(f, hn::BitCast(df, hn::Set(du, 0x400000u))), f);
  } else {
#ifdef EW_HIGHWAY_F16C
    // F16C: exact, and a NaN is made quiet with its payload kept.
    (void)du;
    return hn::PromoteTo(df, hn::BitCast(hn::Rebind<hwy::float16_t, DF>(), bits));
#else
    return WidenF16Bits(df, hn::PromoteTo(du, bits));
#endif
  }
}

template <class T, class DF>
HWY_INLINE Bits16<DF> Narrow16(DF df, hn::Vec<DF> v) {
  const hn::RebindToSigned<DF> di;
  const hn::Rebind<uint16_t, DF> d16;
  if constexpr (std::is_same_v<T, bfloat16>) {
    return hn::DemoteTo(d16, hn::BitCast(di, hn::ShiftRight<16>(NarrowBF16High(df, v))));
  } else {
#ifdef EW_HIGHWAY_F16C
    // F16C rounds to nearest even (immediate rounding mode) and keeps NaNs as the rule says.
    (void)di;
    return hn::BitCast(d16, hn::DemoteTo(hn::Rebind<hwy::float16_t, DF>(), v));
#else
    return hn::DemoteTo(d16, NarrowF16Bits(df, v));
#endif
  }
}

}  // namespace HWY_NAMESPACE
}  // namespace ew::detail::highway
HWY_AFTER_NAMESPACE();

#endif  // EW_HIGHWAY_FLOAT16_INL_H_

// The element functions whose result is not one IEEE operation (exp, log, tanh, sigmoid)
// and the library's rules for min, max and round, written once for every backend.
//
// Every algorithm is a fixed sequence of kit operations, each rounding exactly once as
// IEEE 754 says (fma included: one rounding, always), with no branch on a value: vector
// kits evaluate every lane through both sides of each select. A kit that rounds each of
// its operations correctly therefore gives the same bits as any other, so the scalar
// reference, Highway vectors, Kokkos and CUDA (this file is pasted verbatim into NVRTC
// source) agree bit for bit. Host code must be compiled without contraction of a*b+c
// into an fma (-ffp-contract=off; the library's targets set it) and without fast-math.
//
// A kit K provides
//   types   T (float or double), V (values), M (masks), I (same-width signed integers)
//   V       add sub mul div fma(a, b, c) = a*b+c, neg abs sqrt, floor ceil trunc (exact),
//           rint (to nearest, ties to even), splat(T), select(M, V yes, V no)
//   M       lt le gt ge eq ne (V, V) (false with a NaN operand, but ne true, as C++'s),
//           isnan(V), mask_and mask_or (M, M), mask_not(M)
//   I       bits(V) and from_bits(I) (bit casts), splat_int(long long), iadd isub iand (I, I),
//           shl(I, int) and shr(I, int) (arithmetic: copies the sign bit), to_int(V) for an
//           integral V and to_float(I), both exact for magnitudes below 2^30.
// ew/detail/scalar_kit.hpp has the kit for one element; backends/highway/math_kit-inl.h
// the one for Highway vectors.
//
// Accuracy, measured against correctly rounded results by tests/math (docs/expressions.md
// has the figures): at most 2 ulp for exp, log, tanh and sigmoid, in float and double,
// on the whole range, subnormal results included. The polynomials come from
// tests/math/gen_coefficients.py.
//
// NaN: every function returns a NaN operand itself, bits unchanged (min and max the first
// one that is NaN), so NaN results are the same bits on every backend too; the only NaN
// made up is log's of a negative number, the default quiet NaN (0x7fc00000 in float).
//
// Two ways in. Included plainly (an include guard), it defines ew::math once. GCC
// compiles a template with the instruction set of the place where it is defined, so
// vector code needs the algorithms defined inside each Highway target's section:
// backends/highway/math_kit-inl.h includes this file there with EW_MATH_PER_HIGHWAY_TARGET
// defined, which defines ew::math::HWY_NAMESPACE once per target (Highway's per-target
// include guard, keyed on HWY_TARGET_TOGGLE).

#if defined(EW_MATH_PER_HIGHWAY_TARGET)
#if defined(EW_DETAIL_MATH_HPP_PER_TARGET_) == defined(HWY_TARGET_TOGGLE)
#ifdef EW_DETAIL_MATH_HPP_PER_TARGET_
#undef EW_DETAIL_MATH_HPP_PER_TARGET_
#else
#define EW_DETAIL_MATH_HPP_PER_TARGET_
#endif
#define EW_MATH_DEFINE_NOW_
#endif
#elif !defined(EW_DETAIL_MATH_HPP)
#define EW_DETAIL_MATH_HPP
#define EW_MATH_DEFINE_NOW_
#endif

#ifdef EW_MATH_DEFINE_NOW_
#undef EW_MATH_DEFINE_NOW_

#ifndef EW_MATH_FN  // also defined by ew/detail/scalar_kit.hpp, which may come first
#if defined(__CUDACC__)
#define EW_MATH_FN __host__ __device__ inline
#else
#define EW_MATH_FN inline
#endif
#endif

#if defined(EW_MATH_PER_HIGHWAY_TARGET)
namespace ew::math::HWY_NAMESPACE {
#else
namespace ew::math {
#endif

namespace impl {

// The binary format's fields, as integer constants in the kit's integer lanes.
template <class T>
struct Format;
template <>
struct Format<float> {
  static constexpr int mantissa_bits = 23;
  static constexpr long long exponent_bias = 127;
  static constexpr long long mantissa_mask = 0x007fffff;
  static constexpr long long infinity_bits = 0x7f800000;
  static constexpr long long nan_bits = 0x7fc00000;
  static constexpr long long sqrt_half_bits = 0x3f3504f3;  // float nearest to sqrt(1/2)
  static constexpr long long one_bits = 0x3f800000;
};
template <>
struct Format<double> {
  static constexpr int mantissa_bits = 52;
  static constexpr long long exponent_bias = 1023;
  static constexpr long long mantissa_mask = 0x000fffffffffffffLL;
  static constexpr long long infinity_bits = 0x7ff0000000000000LL;
  static constexpr long long nan_bits = 0x7ff8000000000000LL;
  static constexpr long long sqrt_half_bits = 0x3fe6a09e667f3bcdLL;  // double nearest to sqrt(1/2)
  static constexpr long long one_bits = 0x3ff0000000000000LL;
};

template <class K>
constexpr bool is_f32 = sizeof(typename K::T) == 4;

// c0 + x*(c1 + x*(c2 + ...)), one fma per coefficient.
template <class K>
EW_MATH_FN typename K::V horner(typename K::V, typename K::T c) {
  return K::splat(c);
}
template <class K, class... Rest>
EW_MATH_FN typename K::V horner(typename K::V x, typename K::T c, Rest... rest) {
  return K::fma(horner<K>(x, rest...), x, K::splat(c));
}

template <class K>
EW_MATH_FN typename K::V infinity() {
  return K::from_bits(K::splat_int(Format<typename K::T>::infinity_bits));
}

// 2^n for an integral n with -(bias-1) <= n <= bias.
template <class K>
EW_MATH_FN typename K::V pow2(typename K::I n) {
  using F = Format<typename K::T>;
  return K::from_bits(K::shl(K::iadd(n, K::splat_int(F::exponent_bias)), F::mantissa_bits));
}

}  // namespace impl

// min(a, b): NaN if either is NaN (a if both are), else the smaller; for operands that
// compare equal (+0 and -0) it returns a. No operation touches the result's bits.
template <class K>
EW_MATH_FN typename K::V min(typename K::V a, typename K::V b) {
  const typename K::V smaller = K::select(K::mask_or(K::lt(b, a), K::isnan(b)), b, a);
  return K::select(K::isnan(a), a, smaller);
}

// max(a, b): NaN if either is NaN (a if both are), else the larger; for operands that
// compare equal (+0 and -0) it returns a.
template <class K>
EW_MATH_FN typename K::V max(typename K::V a, typename K::V b) {
  const typename K::V larger = K::select(K::mask_or(K::gt(b, a), K::isnan(b)), b, a);
  return K::select(K::isnan(a), a, larger);
}

// round(x): to the nearest integer, halfway cases away from zero (std::round), sign of
// zero kept. x - trunc(x) is exact, so the decision sees the true fraction.
template <class K>
EW_MATH_FN typename K::V round(typename K::V x) {
  using T = typename K::T;
  const typename K::V t = K::trunc(x);
  const typename K::M away = K::ge(K::abs(K::sub(x, t)), K::splat(T(0.5)));
  const typename K::V step = K::select(K::lt(x, K::splat(T(0))), K::splat(T(-1)), K::splat(T(1)));
  return K::select(K::isnan(x), x, K::select(away, K::add(t, step), t));
}

// exp(x) = 2^n * exp(r), n = rint(x/ln2), r = x - n*ln2 with ln2 in two parts (Cody and
// Waite; the first fma is exact, the product n*ln2_hi cancelling against x), exp(r) by a
// polynomial on |r| <= ln2/2. 2^n is applied in two factors so that neither overflows
// before the product does and a subnormal result is rounded once.
template <class K>
EW_MATH_FN typename K::V exp(typename K::V x) {
  using T = typename K::T;
  using V = typename K::V;
  constexpr bool f32 = impl::is_f32<K>;
  // Beyond these bounds the result is +inf or 0 already; clamping keeps n in range. NaN stays.
  const V hi = K::splat(f32 ? T(89) : T(710)), lo = K::splat(f32 ? T(-104) : T(-746));
  V xc = K::select(K::gt(x, hi), hi, x);
  xc = K::select(K::lt(xc, lo), lo, xc);
  V n = K::rint(K::mul(xc, K::splat(f32 ? T(0x1.715476p+0f) : T(0x1.71547652b82fep+0))));
  n = K::select(K::isnan(x), K::splat(T(0)), n);  // a defined integer for every lane
  V r = K::fma(n, K::splat(f32 ? T(-0x1.62e43p-1f) : T(-0x1.62e42fefa39efp-1)), xc);
  r = K::fma(n, K::splat(f32 ? T(0x1.05c61p-29f) : T(-0x1.abc9e3b39803fp-56)), r);
  V p;
  if constexpr (f32)
    p = impl::horner<K>(r, 0x1p-1f, 0x1.555556p-3f, 0x1.5554e8p-5f, 0x1.1110ep-7f, 0x1.6d4382p-10f,
                        0x1.a12544p-13f);
  else
    p = impl::horner<K>(r, 0x1p-1, 0x1.5555555555557p-3, 0x1.5555555555556p-5, 0x1.11111111100c7p-7,
                        0x1.6c16c16c162c9p-10, 0x1.a01a01abf2f91p-13, 0x1.a01a01a6decfap-16,
                        0x1.71de020ec9913p-19, 0x1.27e4db5089ca5p-22, 0x1.af4e31dbeb682p-26,
                        0x1.1f732ca1e4307p-29);
  p = K::fma(p, r, K::splat(T(1)));  // 1 + r*q
  p = K::fma(p, r, K::splat(T(1)));  // 1 + r + r^2*q
  const typename K::I ni = K::to_int(n);
  const typename K::I half = K::shr(ni, 1);
  const V result = K::mul(K::mul(p, impl::pow2<K>(half)), impl::pow2<K>(K::isub(ni, half)));
  return K::select(K::isnan(x), x, result);
}

// log(x) = k*ln2 + log(m), x = 2^k * m with sqrt(1/2) <= m < sqrt(2); with f = m - 1
// (exact) and s = f/(2+f), log(m) = f - (f^2/2 - s*(f^2/2 + R(s^2))) as in fdlibm,
// whose error analysis keeps the rounding of s away from the leading term f. k*ln2_hi is
// exact (ln2_hi has few bits).
template <class K>
EW_MATH_FN typename K::V log(typename K::V x) {
  using T = typename K::T;
  using V = typename K::V;
  using F = impl::Format<T>;
  constexpr bool f32 = impl::is_f32<K>;
  const V one = K::splat(T(1)), zero = K::splat(T(0)), inf = impl::infinity<K>();
  // Subnormals are scaled into the normal range; 0, negatives, inf and NaN are replaced
  // by 1 here (their results are selected at the end) so that the integer work is defined.
  const typename K::M subnormal = K::lt(x, K::splat(f32 ? T(0x1p-126f) : T(0x1p-1022)));
  V xs = K::select(subnormal, K::mul(x, K::splat(f32 ? T(0x1p25f) : T(0x1p54))), x);
  const V k_adjust = K::select(subnormal, K::splat(f32 ? T(-25) : T(-54)), zero);
  xs = K::select(K::mask_and(K::gt(x, zero), K::lt(x, inf)), xs, one);
  // Moving sqrt(1/2) to the bottom of the exponent's range splits x at sqrt(1/2), not 1.
  typename K::I ix = K::iadd(K::bits(xs), K::splat_int(F::one_bits - F::sqrt_half_bits));
  const typename K::I k = K::isub(K::shr(ix, F::mantissa_bits), K::splat_int(F::exponent_bias));
  ix = K::iadd(K::iand(ix, K::splat_int(F::mantissa_mask)), K::splat_int(F::sqrt_half_bits));
  const V f = K::sub(K::from_bits(ix), one);
  const V dk = K::add(K::to_float(k), k_adjust);
  const V hfsq = K::mul(K::mul(K::splat(T(0.5)), f), f);
  const V s = K::div(f, K::add(f, K::splat(T(2))));
  const V z = K::mul(s, s);
  V g;
  if constexpr (f32)
    g = impl::horner<K>(z, 0x1.555556p-1f, 0x1.9999ecp-2f, 0x1.245c44p-2f, 0x1.ddcee8p-3f);
  else
    g = impl::horner<K>(z, 0x1.5555555555558p-1, 0x1.99999999952e1p-2, 0x1.2492492df16b9p-2,
                        0x1.c71c62e553b2ap-3, 0x1.7462b4b7cd9b9p-3, 0x1.39fe5ec1c942fp-3,
                        0x1.2b585eef56af2p-3);
  const V R = K::mul(z, g);
  const V ln2_hi = K::splat(f32 ? T(0x1.62e4p-1f) : T(0x1.62e42feep-1));
  const V ln2_lo = K::splat(f32 ? T(0x1.7f7d1cp-20f) : T(0x1.a39ef35793c76p-33));
  const V t = K::fma(s, K::add(hfsq, R), K::mul(dk, ln2_lo));
  V result = K::sub(K::mul(dk, ln2_hi), K::sub(K::sub(hfsq, t), f));
  result = K::select(K::eq(x, zero), K::neg(inf), result);
  result = K::select(K::lt(x, zero), K::from_bits(K::splat_int(F::nan_bits)), result);
  result = K::select(K::eq(x, inf), inf, result);
  return K::select(K::isnan(x), x, result);
}

// tanh(x): x + x^3*q(x^2) for |x| < 0.625 (no cancellation near 0), else
// sign(x) * (1 - 2/(e + 1)) with e = exp(2|x|). There the rounding errors of e + 1, of the
// quotient and of 1 - quotient are each recovered exactly (Fast2Sum, an fma remainder) and
// added back before the last rounding, so that only exp's error remains, damped 3 times.
// |x| is clamped where tanh is +-1 to the last bit already, keeping e finite.
template <class K>
EW_MATH_FN typename K::V tanh(typename K::V x) {
  using T = typename K::T;
  using V = typename K::V;
  constexpr bool f32 = impl::is_f32<K>;
  const V zero = K::splat(T(0)), one = K::splat(T(1)), two = K::splat(T(2));
  const V z = K::mul(x, x);
  V q;
  if constexpr (f32)
    q = impl::horner<K>(z, -0x1.555556p-2f, 0x1.1110eap-3f, -0x1.ba08c4p-5f, 0x1.64a976p-6f, -0x1.116a16p-7f,
                        0x1.2c83cp-9f);
  else
    q = impl::horner<K>(z, -0x1.5555555555555p-2, 0x1.11111111110a8p-3, -0x1.ba1ba1ba0f126p-5,
                        0x1.664f487e0a749p-6, -0x1.226e3473dce5cp-7, 0x1.d6d39ae3905e2p-9,
                        -0x1.7d9f6f23e8682p-10, 0x1.3526e9ed54da1p-11, -0x1.f243823c8c981p-13,
                        0x1.8445870f6fe41p-14, -0x1.05bbdae896297p-15, 0x1.b33642a122cddp-18);
  // x itself at +-0: x + x*(z*q) would turn -0 into +0.
  const V small = K::select(K::eq(x, zero), x, K::fma(x, K::mul(z, q), x));

  const V a = K::abs(x), limit = K::splat(T(32));
  const V clamped = K::select(K::gt(a, limit), limit, a);
  const V e = exp<K>(K::add(clamped, clamped));
  const V d = K::add(e, one);
  const V d_err = K::add(K::sub(e, d), one);    // e + 1 = d + d_err exactly (e >= 1)
  const V rec = K::div(one, d);
  const V quo = K::mul(two, rec);                // 2/d, rounded once
  const V rem = K::fma(K::neg(quo), d, two);     // 2 - quo*d, exact
  const V quo_err = K::mul(K::fma(K::neg(quo), d_err, rem), rec);  // 2/(e+1) = quo + quo_err
  const V h = K::sub(one, quo);
  const V h_err = K::sub(K::sub(one, h), quo);   // 1 - quo = h + h_err exactly
  V large = K::add(h, K::sub(h_err, quo_err));
  large = K::select(K::lt(x, zero), K::neg(large), large);
  const V result = K::select(K::lt(a, K::splat(T(0.625))), small, large);
  return K::select(K::isnan(x), x, result);
}

// sigmoid(x) = 1/(1 + exp(-x)), computed from e = exp(-|x|) <= 1 so that nothing
// overflows: n/(1 + e) with n = 1 for x >= 0 and n = e for x < 0 (no cancellation for
// large negative x, down to subnormal results). The rounding errors of 1 + e and of the
// quotient are recovered exactly and added back before the last rounding, so that the
// result carries exp's error and one rounding.
template <class K>
EW_MATH_FN typename K::V sigmoid(typename K::V x) {
  using T = typename K::T;
  using V = typename K::V;
  const V one = K::splat(T(1));
  const V e = exp<K>(K::neg(K::abs(x)));
  const V n = K::select(K::lt(x, K::splat(T(0))), e, one);
  const V d = K::add(one, e);
  const V d_err = K::add(K::sub(one, d), e);  // 1 + e = d + d_err exactly (e <= 1)
  const V rec = K::div(one, d);
  const V quo = K::mul(n, rec);
  const V rem = K::fma(K::neg(quo), d, n);    // n - quo*d, exact
  const V result = K::fma(K::fma(K::neg(quo), d_err, rem), rec, quo);
  return K::select(K::isnan(x), x, result);
}

}  // namespace ew::math (or ew::math::HWY_NAMESPACE)

#endif  // EW_MATH_DEFINE_NOW_

#pragma once
// Shared by the math tests: the functions under test by name, inputs of every kind, and
// bit comparisons.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <type_traits>
#include <vector>

#include "ew/detail/math.hpp"
#include "ew/detail/scalar_kit.hpp"

namespace ew::test::math {

enum class Fn { exp, log, tanh, sigmoid, round, min, max };
inline constexpr Fn unary_fns[] = {Fn::exp, Fn::log, Fn::tanh, Fn::sigmoid, Fn::round};
inline constexpr Fn transcendental_fns[] = {Fn::exp, Fn::log, Fn::tanh, Fn::sigmoid};

inline const char* name(Fn f) {
  switch (f) {
    case Fn::exp: return "exp";
    case Fn::log: return "log";
    case Fn::tanh: return "tanh";
    case Fn::sigmoid: return "sigmoid";
    case Fn::round: return "round";
    case Fn::min: return "min";
    case Fn::max: return "max";
  }
  return "?";
}

// f(a) for unary functions, f(a, b) for min and max, with any kit.
template <class K>
typename K::V apply(Fn f, typename K::V a, typename K::V b) {
  switch (f) {
    case Fn::exp: return ew::math::exp<K>(a);
    case Fn::log: return ew::math::log<K>(a);
    case Fn::tanh: return ew::math::tanh<K>(a);
    case Fn::sigmoid: return ew::math::sigmoid<K>(a);
    case Fn::round: return ew::math::round<K>(a);
    case Fn::min: return ew::math::min<K>(a, b);
    case Fn::max: return ew::math::max<K>(a, b);
  }
  return a;
}

template <class T>
T scalar(Fn f, T a, T b = T(0)) {
  return apply<ew::math::ScalarKit<T>>(f, a, b);
}

template <class T>
using Bits = std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

template <class T>
Bits<T> bits(T v) {
  Bits<T> b;
  std::memcpy(&b, &v, sizeof v);
  return b;
}

template <class T>
T from_bits(Bits<T> b) {
  T v;
  std::memcpy(&v, &b, sizeof v);
  return v;
}

// Values every function must get right: zeros, subnormals, the ends of the normal range,
// infinities, NaNs with payloads and signs, integers and halves, and each function's
// thresholds (overflow, underflow, where tanh switches formulas and saturates).
template <class T>
std::vector<T> special_inputs() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {T(0), -T(0), L::denorm_min(), -L::denorm_min(), L::min(), -L::min(), L::max(), -L::max(),
                      L::infinity(), -L::infinity(), L::quiet_NaN(), -L::quiet_NaN(), L::epsilon(),
                      T(1), T(-1), T(0.5), T(-0.5), T(1.5), T(-1.5), T(2.5), T(-2.5), T(0.625), T(-0.625),
                      T(88.72283935546875), T(89), T(-87.33654), T(-103.27893), T(-103.97208), T(-104),
                      T(709.782712893384), T(709.7827128933841), T(-708.3964185322641), T(-745.1332191019411),
                      T(-745.1332191019412), T(-746), T(710), T(20), T(-20), T(9.01), T(19.06), T(-19.06), T(40)};
  const T subnormal_mid = from_bits<T>(Bits<T>(1) << (sizeof(T) == 4 ? 20 : 49));
  v.push_back(subnormal_mid);
  v.push_back(-subnormal_mid);
  v.push_back(from_bits<T>(bits(L::quiet_NaN()) | 0x5));  // a NaN with a payload
  v.push_back(std::nextafter(T(0.5), T(0)));                // rounds to 0, not 1
  v.push_back(std::nextafter(T(0.625), T(0)));
  v.push_back(std::nextafter(T(1), T(2)));
  v.push_back(std::nextafter(T(1), T(0)));
  const T big_integer = sizeof(T) == 4 ? T(8388609) : T(4503599627370497.0);  // 2^mantissa + 1
  v.push_back(big_integer);
  v.push_back(-big_integer);
  return v;
}

// Random values of every magnitude (random bit patterns, NaNs and infinities included)
// mixed with values of ordinary size.
template <class T>
std::vector<T> random_inputs(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<T> ordinary(T(-30), T(30));
  std::vector<T> v(n);
  for (std::size_t i = 0; i < n; ++i)
    v[i] = i % 2 ? ordinary(rng) : from_bits<T>(static_cast<Bits<T>>(rng()));
  return v;
}

}  // namespace ew::test::math

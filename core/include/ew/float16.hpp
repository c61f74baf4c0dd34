#pragma once
// 16-bit storage types: IEEE binary16 (`ew::half`) and bfloat16 (`ew::bfloat16`).
// They only store numbers; arithmetic happens in float (docs/ops.md, "16-bit storage").
// Each is a trivially copyable 2-byte struct holding the bits, so an array of
// `__half`, `__nv_bfloat16`, `_Float16` or `std::bfloat16_t` is an array of these
// (reinterpret_cast the pointer). No CUDA header: the conversions are plain integer
// code that every backend, GPU kernels included, compiles as it is.
//
// The rules, the same on every backend:
// - widening to float is exact; a NaN stays NaN with its sign and payload, made quiet;
// - narrowing from float or double rounds once, to nearest even: overflow gives ±inf,
//   tiny values give subnormals or ±0, a NaN stays NaN (sign and top payload bits kept,
//   made quiet). Narrowing from double never goes through float (no double rounding).
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "ew/detail/host_device.hpp"

namespace ew {

namespace float16_detail {

template <class To, class From>
EW_HOST_DEVICE inline To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// Round a float or double (its bits in UInt) to a 16-bit format with `exp_bits`
// exponent bits and `mant_bits` fraction bits, to nearest even, in integer arithmetic.
template <int exp_bits, int mant_bits, class UInt>
EW_HOST_DEVICE inline std::uint16_t narrow_bits(UInt bits) {
  constexpr int width = int(sizeof(UInt)) * 8;
  constexpr int src_mant = width == 32 ? 23 : 52;
  constexpr int src_bias = width == 32 ? 127 : 1023;
  constexpr int bias = (1 << (exp_bits - 1)) - 1;
  constexpr int shift = src_mant - mant_bits;  // fraction bits dropped from a normal number
  constexpr UInt one = 1;
  constexpr UInt sign_bit = one << (width - 1);
  constexpr UInt src_inf = ((one << (width - 1 - src_mant)) - 1) << src_mant;
  constexpr std::uint16_t inf = static_cast<std::uint16_t>(((1u << exp_bits) - 1) << mant_bits);
  constexpr std::uint16_t quiet = static_cast<std::uint16_t>(1u << (mant_bits - 1));
  constexpr std::uint16_t mant_mask = static_cast<std::uint16_t>((1u << mant_bits) - 1);
  // Source exponent field of the format's smallest normal number, and the rebias.
  constexpr UInt min_normal = static_cast<UInt>(src_bias - bias + 1) << src_mant;
  constexpr UInt rebias = static_cast<UInt>(src_bias - bias) << src_mant;

  const std::uint16_t sign = static_cast<std::uint16_t>((bits & sign_bit) >> (width - 16));
  const UInt a = bits & ~sign_bit;
  if (a > src_inf) return static_cast<std::uint16_t>(sign | inf | quiet | ((a >> shift) & mant_mask));
  if (a >= min_normal || rebias == 0) {  // normal (or a format with the source's exponent range)
    const UInt r = a - rebias;
    const UInt rounded = (r + ((one << (shift - 1)) - 1) + ((r >> shift) & one)) >> shift;
    // A carry out of the largest finite value, or a larger exponent, is overflow.
    return static_cast<std::uint16_t>(sign | (rounded >= inf ? inf : rounded));
  }
  // A subnormal result: the significand with its implicit bit, scaled to units of the
  // smallest subnormal, rounded to nearest even. Source subnormals are far below.
  const int exponent = static_cast<int>(a >> src_mant);
  const int sub_shift = src_bias + src_mant + 1 - bias - mant_bits - exponent;
  if (exponent == 0 || sub_shift > src_mant + 1) return sign;  // below half the smallest subnormal
  const UInt significand = (a & ((one << src_mant) - 1)) | (one << src_mant);
  UInt q = significand >> sub_shift;
  const UInt rest = significand & ((one << sub_shift) - 1), halfway = one << (sub_shift - 1);
  if (rest > halfway || (rest == halfway && (q & one))) ++q;
  return static_cast<std::uint16_t>(sign | q);
}

EW_HOST_DEVICE inline std::uint32_t f16_to_f32_bits(std::uint16_t h) {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exponent == 0x1f) return sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u);
  if (exponent != 0) return sign | ((exponent + 112u) << 23) | (mant << 13);
  if (mant == 0) return sign;
  // Subnormal: normalize the fraction (mant * 2^-24).
  int e = 113;  // 127 - 14
  std::uint32_t m = mant;
  while (!(m & 0x400u)) m <<= 1, --e;
  return sign | (static_cast<std::uint32_t>(e) << 23) | ((m & 0x3ffu) << 13);
}

EW_HOST_DEVICE inline std::uint32_t bf16_to_f32_bits(std::uint16_t h) {
  const std::uint32_t f = static_cast<std::uint32_t>(h) << 16;
  const bool nan = (f & 0x7fffffffu) > 0x7f800000u;
  return nan ? f | 0x400000u : f;
}

}  // namespace float16_detail

// IEEE 754 binary16: 1 sign, 5 exponent, 10 fraction bits.
struct half {
  std::uint16_t bits;

  half() = default;  // uninitialized like float; half{} is +0
  EW_HOST_DEVICE explicit half(float f)
      : bits(float16_detail::narrow_bits<5, 10>(float16_detail::bit_cast<std::uint32_t>(f))) {}
  EW_HOST_DEVICE explicit half(double d)
      : bits(float16_detail::narrow_bits<5, 10>(float16_detail::bit_cast<std::uint64_t>(d))) {}
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  EW_HOST_DEVICE explicit half(I i) : half(static_cast<double>(i)) {}
  EW_HOST_DEVICE explicit operator float() const {
    return float16_detail::bit_cast<float>(float16_detail::f16_to_f32_bits(bits));
  }
  EW_HOST_DEVICE explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  EW_HOST_DEVICE static half from_bits(std::uint16_t b) {
    half h;
    h.bits = b;
    return h;
  }
};

// bfloat16: the upper half of a float (1 sign, 8 exponent, 7 fraction bits).
struct bfloat16 {
  std::uint16_t bits;

  bfloat16() = default;  // uninitialized like float; bfloat16{} is +0
  EW_HOST_DEVICE explicit bfloat16(float f)
      : bits(float16_detail::narrow_bits<8, 7>(float16_detail::bit_cast<std::uint32_t>(f))) {}
  EW_HOST_DEVICE explicit bfloat16(double d)
      : bits(float16_detail::narrow_bits<8, 7>(float16_detail::bit_cast<std::uint64_t>(d))) {}
  template <class I, std::enable_if_t<std::is_integral_v<I>, int> = 0>
  EW_HOST_DEVICE explicit bfloat16(I i) : bfloat16(static_cast<double>(i)) {}
  EW_HOST_DEVICE explicit operator float() const {
    return float16_detail::bit_cast<float>(float16_detail::bf16_to_f32_bits(bits));
  }
  EW_HOST_DEVICE explicit operator double() const { return static_cast<double>(static_cast<float>(*this)); }
  EW_HOST_DEVICE static bfloat16 from_bits(std::uint16_t b) {
    bfloat16 h;
    h.bits = b;
    return h;
  }
};

static_assert(sizeof(half) == 2 && alignof(half) == 2 && std::is_trivially_copyable_v<half> &&
                  std::is_standard_layout_v<half>,
              "ew::half must be layout-compatible with __half and _Float16");
static_assert(sizeof(bfloat16) == 2 && alignof(bfloat16) == 2 && std::is_trivially_copyable_v<bfloat16> &&
                  std::is_standard_layout_v<bfloat16>,
              "ew::bfloat16 must be layout-compatible with __nv_bfloat16");

// Whether T is one of the 16-bit storage types.
template <class T>
inline constexpr bool is_storage16_v = std::is_same_v<T, half> || std::is_same_v<T, bfloat16>;

// The type arithmetic on T happens in, and the type of an op's scalars s and t: float
// for the 16-bit storage types, T itself otherwise.
template <class T>
using compute_t = std::conditional_t<is_storage16_v<T>, float, T>;

// Widening and rounding that read the same for every storage type.
template <class T>
EW_HOST_DEVICE inline compute_t<T> widen(T x) {
  return static_cast<compute_t<T>>(x);
}
template <class T>
EW_HOST_DEVICE inline T narrow(compute_t<T> x) {
  return T(x);
}

}  // namespace ew

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
#include "ew/detail/float16_bits.hpp"  // narrow_bits, f16_to_f32_bits, bf16_to_f32_bits

namespace ew {

namespace float16_detail {

template <class To, class From>
EW_HOST_DEVICE inline To bit_cast(const From& from) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of different sizes");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

// An integer as a double that rounds to a 16-bit type as the integer itself would: exact up
// to 2^53; above, the bits a double cannot hold folded into its last bit (round to odd), so
// that narrowing rounds once, not twice (bf16 of 2^62 + 2^54 + 1 once came out a unit low).
template <class I>
EW_HOST_DEVICE inline double integer_for_narrowing(I i) {
  const bool negative = i < I(0);
  const unsigned long long wide = static_cast<unsigned long long>(i);
  const unsigned long long magnitude = negative ? 0ull - wide : wide;
  int dropped = 0;
  while ((magnitude >> dropped) >> 53) ++dropped;
  unsigned long long kept = magnitude >> dropped;
  if (dropped && (magnitude & ((1ull << dropped) - 1))) kept |= 1;
  const double d = static_cast<double>(kept) * static_cast<double>(1ull << dropped);  // exact
  return negative ? -d : d;
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
  EW_HOST_DEVICE explicit half(I i) : half(float16_detail::integer_for_narrowing(i)) {}
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
  EW_HOST_DEVICE explicit bfloat16(I i) : bfloat16(float16_detail::integer_for_narrowing(i)) {}
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

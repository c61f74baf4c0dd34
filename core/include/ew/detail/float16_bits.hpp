#ifndef EW_DETAIL_FLOAT16_BITS_HPP
#define EW_DETAIL_FLOAT16_BITS_HPP
// The 16-bit conversions of ew/float16.hpp as integer functions on bit patterns: the one
// definition that host code, nvcc-compiled kernels and the CUDA source generated for
// expressions (which pastes this text into NVRTC) all run. No #include, so that NVRTC
// takes the text as it is; the includer defines EW_HOST_DEVICE (ew/detail/host_device.hpp,
// or the generated source's prelude).
#ifndef EW_HOST_DEVICE
#error "define EW_HOST_DEVICE (ew/detail/host_device.hpp) before including ew/detail/float16_bits.hpp"
#endif

namespace ew {
namespace float16_detail {

// Round a float or double (its bits in UInt) to a 16-bit format with `exp_bits`
// exponent bits and `mant_bits` fraction bits, to nearest even, in integer arithmetic.
template <int exp_bits, int mant_bits, class UInt>
EW_HOST_DEVICE inline unsigned short narrow_bits(UInt bits) {
  constexpr int width = int(sizeof(UInt)) * 8;
  constexpr int src_mant = width == 32 ? 23 : 52;
  constexpr int src_bias = width == 32 ? 127 : 1023;
  constexpr int bias = (1 << (exp_bits - 1)) - 1;
  constexpr int shift = src_mant - mant_bits;  // fraction bits dropped from a normal number
  constexpr UInt one = 1;
  constexpr UInt sign_bit = one << (width - 1);
  constexpr UInt src_inf = ((one << (width - 1 - src_mant)) - 1) << src_mant;
  constexpr unsigned short inf = static_cast<unsigned short>(((1u << exp_bits) - 1) << mant_bits);
  constexpr unsigned short quiet = static_cast<unsigned short>(1u << (mant_bits - 1));
  constexpr unsigned short mant_mask = static_cast<unsigned short>((1u << mant_bits) - 1);
  // Source exponent field of the format's smallest normal number, and the rebias.
  constexpr UInt min_normal = static_cast<UInt>(src_bias - bias + 1) << src_mant;
  constexpr UInt rebias = static_cast<UInt>(src_bias - bias) << src_mant;

  const unsigned short sign = static_cast<unsigned short>((bits & sign_bit) >> (width - 16));
  const UInt a = bits & ~sign_bit;
  if (a > src_inf) return static_cast<unsigned short>(sign | inf | quiet | ((a >> shift) & mant_mask));
  if (a >= min_normal || rebias == 0) {  // normal (or a format with the source's exponent range)
    const UInt r = a - rebias;
    const UInt rounded = (r + ((one << (shift - 1)) - 1) + ((r >> shift) & one)) >> shift;
    // A carry out of the largest finite value, or a larger exponent, is overflow.
    return static_cast<unsigned short>(sign | (rounded >= inf ? inf : rounded));
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
  return static_cast<unsigned short>(sign | q);
}

EW_HOST_DEVICE inline unsigned int f16_to_f32_bits(unsigned short h) {
  const unsigned int sign = static_cast<unsigned int>(h & 0x8000u) << 16;
  const unsigned int exponent = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exponent == 0x1f) return sign | 0x7f800000u | (mant << 13) | (mant ? 0x400000u : 0u);
  if (exponent != 0) return sign | ((exponent + 112u) << 23) | (mant << 13);
  if (mant == 0) return sign;
  // Subnormal: normalize the fraction (mant * 2^-24).
  int e = 113;  // 127 - 14
  unsigned int m = mant;
  while (!(m & 0x400u)) m <<= 1, --e;
  return sign | (static_cast<unsigned int>(e) << 23) | ((m & 0x3ffu) << 13);
}

EW_HOST_DEVICE inline unsigned int bf16_to_f32_bits(unsigned short h) {
  const unsigned int f = static_cast<unsigned int>(h) << 16;
  const bool nan = (f & 0x7fffffffu) > 0x7f800000u;
  return nan ? f | 0x400000u : f;
}

}  // namespace float16_detail
}  // namespace ew

#endif  // EW_DETAIL_FLOAT16_BITS_HPP

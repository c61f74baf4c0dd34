#ifndef EW_DETAIL_SCALAR_KIT_HPP
#define EW_DETAIL_SCALAR_KIT_HPP
// The arithmetic kit of ew/detail/math.hpp for one element, on the host (GCC or Clang
// builtins) and in CUDA device code (round-to-nearest intrinsics, which nvcc never
// contracts into an fma). No #include, so that NVRTC can take the text as it is.
// Integer lanes wrap on overflow (computed as unsigned), so no input is undefined behaviour.

#ifndef EW_MATH_FN  // as in ew/detail/math.hpp
#if defined(__CUDACC__)
#define EW_MATH_FN __host__ __device__ inline
#else
#define EW_MATH_FN inline
#endif
#endif

namespace ew::math {

template <class T>
struct ScalarKit;

namespace impl {

// Masks and selects shared by both dtypes.
template <class T_, class I_, class U_>
struct ScalarKitBase {
  using T = T_;
  using V = T_;
  using M = bool;
  using I = I_;

  EW_MATH_FN static V splat(T c) { return c; }
  EW_MATH_FN static I splat_int(long long c) { return static_cast<I>(c); }
  EW_MATH_FN static V neg(V a) { return -a; }
  EW_MATH_FN static M lt(V a, V b) { return a < b; }
  EW_MATH_FN static M le(V a, V b) { return a <= b; }
  EW_MATH_FN static M gt(V a, V b) { return a > b; }
  EW_MATH_FN static M ge(V a, V b) { return a >= b; }
  EW_MATH_FN static M eq(V a, V b) { return a == b; }
  EW_MATH_FN static M ne(V a, V b) { return a != b; }
  EW_MATH_FN static M isnan(V a) { return a != a; }
  EW_MATH_FN static V select(M m, V yes, V no) { return m ? yes : no; }
  EW_MATH_FN static M mask_and(M a, M b) { return a && b; }
  EW_MATH_FN static M mask_or(M a, M b) { return a || b; }
  EW_MATH_FN static M mask_not(M a) { return !a; }
  EW_MATH_FN static I iadd(I a, I b) { return static_cast<I>(static_cast<U_>(a) + static_cast<U_>(b)); }
  EW_MATH_FN static I isub(I a, I b) { return static_cast<I>(static_cast<U_>(a) - static_cast<U_>(b)); }
  EW_MATH_FN static I iand(I a, I b) { return a & b; }
  EW_MATH_FN static I shl(I a, int n) { return static_cast<I>(static_cast<U_>(a) << n); }
  EW_MATH_FN static I shr(I a, int n) { return a >> n; }  // arithmetic on GCC, Clang and nvcc
  EW_MATH_FN static I to_int(V a) { return static_cast<I>(a); }
  EW_MATH_FN static V to_float(I a) { return static_cast<V>(a); }
};

}  // namespace impl

// Each operation has a device form (CUDA's round-to-nearest intrinsics, which nvcc never
// contracts into an fma) and a host form (GCC or Clang builtins); EW_KIT_PICK_ keeps one.
#if defined(__CUDA_ARCH__)
#define EW_KIT_PICK_(device, host) device
#else
#define EW_KIT_PICK_(device, host) host
namespace impl {
template <class To, class From>
inline To host_bit_cast(From from) {
  To to;
  __builtin_memcpy(&to, &from, sizeof from);
  return to;
}
}  // namespace impl
#endif

template <>
struct ScalarKit<float> : impl::ScalarKitBase<float, int, unsigned> {
  EW_MATH_FN static V add(V a, V b) { return EW_KIT_PICK_(__fadd_rn(a, b), a + b); }
  EW_MATH_FN static V sub(V a, V b) { return EW_KIT_PICK_(__fsub_rn(a, b), a - b); }
  EW_MATH_FN static V mul(V a, V b) { return EW_KIT_PICK_(__fmul_rn(a, b), a * b); }
  EW_MATH_FN static V div(V a, V b) { return EW_KIT_PICK_(__fdiv_rn(a, b), a / b); }
  EW_MATH_FN static V fma(V a, V b, V c) { return EW_KIT_PICK_(__fmaf_rn(a, b, c), __builtin_fmaf(a, b, c)); }
  EW_MATH_FN static V sqrt(V a) { return EW_KIT_PICK_(__fsqrt_rn(a), __builtin_sqrtf(a)); }
  EW_MATH_FN static V abs(V a) { return EW_KIT_PICK_(fabsf(a), __builtin_fabsf(a)); }
  EW_MATH_FN static V floor(V a) { return EW_KIT_PICK_(floorf(a), __builtin_floorf(a)); }
  EW_MATH_FN static V ceil(V a) { return EW_KIT_PICK_(ceilf(a), __builtin_ceilf(a)); }
  EW_MATH_FN static V trunc(V a) { return EW_KIT_PICK_(truncf(a), __builtin_truncf(a)); }
  EW_MATH_FN static V rint(V a) { return EW_KIT_PICK_(rintf(a), __builtin_rintf(a)); }
  EW_MATH_FN static I bits(V a) { return EW_KIT_PICK_(__float_as_int(a), impl::host_bit_cast<I>(a)); }
  EW_MATH_FN static V from_bits(I a) { return EW_KIT_PICK_(__int_as_float(a), impl::host_bit_cast<V>(a)); }
};

template <>
struct ScalarKit<double> : impl::ScalarKitBase<double, long long, unsigned long long> {
  EW_MATH_FN static V add(V a, V b) { return EW_KIT_PICK_(__dadd_rn(a, b), a + b); }
  EW_MATH_FN static V sub(V a, V b) { return EW_KIT_PICK_(__dsub_rn(a, b), a - b); }
  EW_MATH_FN static V mul(V a, V b) { return EW_KIT_PICK_(__dmul_rn(a, b), a * b); }
  EW_MATH_FN static V div(V a, V b) { return EW_KIT_PICK_(__ddiv_rn(a, b), a / b); }
  EW_MATH_FN static V fma(V a, V b, V c) { return EW_KIT_PICK_(__fma_rn(a, b, c), __builtin_fma(a, b, c)); }
  EW_MATH_FN static V sqrt(V a) { return EW_KIT_PICK_(__dsqrt_rn(a), __builtin_sqrt(a)); }
  EW_MATH_FN static V abs(V a) { return EW_KIT_PICK_(fabs(a), __builtin_fabs(a)); }
  EW_MATH_FN static V floor(V a) { return EW_KIT_PICK_(::floor(a), __builtin_floor(a)); }
  EW_MATH_FN static V ceil(V a) { return EW_KIT_PICK_(::ceil(a), __builtin_ceil(a)); }
  EW_MATH_FN static V trunc(V a) { return EW_KIT_PICK_(::trunc(a), __builtin_trunc(a)); }
  EW_MATH_FN static V rint(V a) { return EW_KIT_PICK_(::rint(a), __builtin_rint(a)); }
  EW_MATH_FN static I bits(V a) { return EW_KIT_PICK_(__double_as_longlong(a), impl::host_bit_cast<I>(a)); }
  EW_MATH_FN static V from_bits(I a) { return EW_KIT_PICK_(__longlong_as_double(a), impl::host_bit_cast<V>(a)); }
};

#undef EW_KIT_PICK_

}  // namespace ew::math

#endif  // EW_DETAIL_SCALAR_KIT_HPP

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

template <>
struct ScalarKit<float> : impl::ScalarKitBase<float, int, unsigned> {
  EW_MATH_FN static V add(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fadd_rn(a, b);
#else
    return a + b;
#endif
  }
  EW_MATH_FN static V sub(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fsub_rn(a, b);
#else
    return a - b;
#endif
  }
  EW_MATH_FN static V mul(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fmul_rn(a, b);
#else
    return a * b;
#endif
  }
  EW_MATH_FN static V div(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __fdiv_rn(a, b);
#else
    return a / b;
#endif
  }
  EW_MATH_FN static V fma(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return __fmaf_rn(a, b, c);
#else
    return __builtin_fmaf(a, b, c);
#endif
  }
  EW_MATH_FN static V sqrt(V a) {
#if defined(__CUDA_ARCH__)
    return __fsqrt_rn(a);
#else
    return __builtin_sqrtf(a);
#endif
  }
  EW_MATH_FN static V abs(V a) {
#if defined(__CUDA_ARCH__)
    return fabsf(a);
#else
    return __builtin_fabsf(a);
#endif
  }
  EW_MATH_FN static V floor(V a) {
#if defined(__CUDA_ARCH__)
    return floorf(a);
#else
    return __builtin_floorf(a);
#endif
  }
  EW_MATH_FN static V ceil(V a) {
#if defined(__CUDA_ARCH__)
    return ceilf(a);
#else
    return __builtin_ceilf(a);
#endif
  }
  EW_MATH_FN static V trunc(V a) {
#if defined(__CUDA_ARCH__)
    return truncf(a);
#else
    return __builtin_truncf(a);
#endif
  }
  EW_MATH_FN static V rint(V a) {
#if defined(__CUDA_ARCH__)
    return rintf(a);
#else
    return __builtin_rintf(a);
#endif
  }
  EW_MATH_FN static I bits(V a) {
#if defined(__CUDA_ARCH__)
    return __float_as_int(a);
#else
    I i;
    __builtin_memcpy(&i, &a, sizeof a);
    return i;
#endif
  }
  EW_MATH_FN static V from_bits(I a) {
#if defined(__CUDA_ARCH__)
    return __int_as_float(a);
#else
    V v;
    __builtin_memcpy(&v, &a, sizeof a);
    return v;
#endif
  }
};

template <>
struct ScalarKit<double> : impl::ScalarKitBase<double, long long, unsigned long long> {
  EW_MATH_FN static V add(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __dadd_rn(a, b);
#else
    return a + b;
#endif
  }
  EW_MATH_FN static V sub(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __dsub_rn(a, b);
#else
    return a - b;
#endif
  }
  EW_MATH_FN static V mul(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __dmul_rn(a, b);
#else
    return a * b;
#endif
  }
  EW_MATH_FN static V div(V a, V b) {
#if defined(__CUDA_ARCH__)
    return __ddiv_rn(a, b);
#else
    return a / b;
#endif
  }
  EW_MATH_FN static V fma(V a, V b, V c) {
#if defined(__CUDA_ARCH__)
    return __fma_rn(a, b, c);
#else
    return __builtin_fma(a, b, c);
#endif
  }
  EW_MATH_FN static V sqrt(V a) {
#if defined(__CUDA_ARCH__)
    return __dsqrt_rn(a);
#else
    return __builtin_sqrt(a);
#endif
  }
  EW_MATH_FN static V abs(V a) {
#if defined(__CUDA_ARCH__)
    return fabs(a);
#else
    return __builtin_fabs(a);
#endif
  }
  EW_MATH_FN static V floor(V a) {
#if defined(__CUDA_ARCH__)
    return ::floor(a);
#else
    return __builtin_floor(a);
#endif
  }
  EW_MATH_FN static V ceil(V a) {
#if defined(__CUDA_ARCH__)
    return ::ceil(a);
#else
    return __builtin_ceil(a);
#endif
  }
  EW_MATH_FN static V trunc(V a) {
#if defined(__CUDA_ARCH__)
    return ::trunc(a);
#else
    return __builtin_trunc(a);
#endif
  }
  EW_MATH_FN static V rint(V a) {
#if defined(__CUDA_ARCH__)
    return ::rint(a);
#else
    return __builtin_rint(a);
#endif
  }
  EW_MATH_FN static I bits(V a) {
#if defined(__CUDA_ARCH__)
    return __double_as_longlong(a);
#else
    I i;
    __builtin_memcpy(&i, &a, sizeof a);
    return i;
#endif
  }
  EW_MATH_FN static V from_bits(I a) {
#if defined(__CUDA_ARCH__)
    return __longlong_as_double(a);
#else
    V v;
    __builtin_memcpy(&v, &a, sizeof a);
    return v;
#endif
  }
};

}  // namespace ew::math

#endif  // EW_DETAIL_SCALAR_KIT_HPP

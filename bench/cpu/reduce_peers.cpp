// OpenMP reduction loops (bench/reduce_peers.hpp), compiled -O3 -march=native like the
// other CPU peers: `parallel for simd reduction(+:)`, static schedule. f32 and 16-bit
// data accumulate in float ("openmp reduction") or double ("f64 acc").
#include <cmath>
#include <type_traits>

#include "ew/float16.hpp"

#include "reduce_peers.hpp"

namespace ew::bench {

namespace {

// An element in the accumulator's type (16-bit storage types through float, exactly).
template <class Acc, class T>
inline Acc widen(T v) {
  return static_cast<Acc>(static_cast<std::conditional_t<sizeof(T) == 2, float, T>>(v));
}

template <class Acc, class T>
Acc reduce(Reduction r, std::size_t n, const T* x, const T* y) {
  Acc s = 0;
  if (r == Reduction::sum) {
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += widen<Acc>(x[i]);
  } else if (r == Reduction::dot) {
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += widen<Acc>(x[i]) * widen<Acc>(y[i]);
  } else {  // unscaled: what a user's loop does (it overflows where norm2 does not)
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += widen<Acc>(x[i]) * widen<Acc>(x[i]);
    s = std::sqrt(s);
  }
  return s;
}

bool any(Reduction, DType, std::size_t) { return true; }
bool not_f64(Reduction, DType d, std::size_t) { return d != DType::f64; }

// 16-bit data as a user would read them: f16 through the compiler's _Float16 (F16C
// instructions under -march=native), bf16 (no arithmetic type in GCC 12) through the
// library's storage type; each element widened to float.
template <class Acc>
double over(Reduction r, DType d, std::size_t n, const void* x, const void* y) {
  switch (d) {
    case DType::f32: return reduce<Acc>(r, n, static_cast<const float*>(x), static_cast<const float*>(y));
#if defined(__FLT16_MAX__)
    case DType::f16: return reduce<Acc>(r, n, static_cast<const _Float16*>(x), static_cast<const _Float16*>(y));
#else
    case DType::f16: return reduce<Acc>(r, n, static_cast<const half*>(x), static_cast<const half*>(y));
#endif
    case DType::bf16: return reduce<Acc>(r, n, static_cast<const bfloat16*>(x), static_cast<const bfloat16*>(y));
    default: return reduce<Acc>(r, n, static_cast<const double*>(x), static_cast<const double*>(y));
  }
}

// In the data's type; 16-bit data in float (their arithmetic type).
double in_type(Reduction r, DType d, std::size_t n, const void* x, const void* y, void*) {
  return d == DType::f64 ? over<double>(r, d, n, x, y) : over<float>(r, d, n, x, y);
}
double in_double(Reduction r, DType d, std::size_t n, const void* x, const void* y, void*) {
  return over<double>(r, d, n, x, y);
}

// The expression reductions: the expression per element, one loop.
template <class Acc, class T>
Acc reduce_expr(ExprReduction r, std::size_t n, const T* a, const T* b) {
  Acc s = 0;
  if (r == ExprReduction::sum_sq_diff) {
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) {
      const Acc d = widen<Acc>(a[i]) - widen<Acc>(b[i]);
      s += d * d;
    }
  } else {
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += std::fabs(widen<Acc>(a[i]) * widen<Acc>(b[i]));
  }
  return s;
}

bool any_expr(ExprReduction, DType, std::size_t) { return true; }
double expr_in_type(ExprReduction r, DType d, std::size_t n, const void* a, const void* b, void*) {
  switch (d) {
    case DType::f32: return reduce_expr<float>(r, n, static_cast<const float*>(a), static_cast<const float*>(b));
#if defined(__FLT16_MAX__)
    case DType::f16: return reduce_expr<float>(r, n, static_cast<const _Float16*>(a), static_cast<const _Float16*>(b));
#else
    case DType::f16: return reduce_expr<float>(r, n, static_cast<const half*>(a), static_cast<const half*>(b));
#endif
    case DType::bf16: return reduce_expr<float>(r, n, static_cast<const bfloat16*>(a), static_cast<const bfloat16*>(b));
    default: return reduce_expr<double>(r, n, static_cast<const double*>(a), static_cast<const double*>(b));
  }
}

}  // namespace

std::vector<ExprReducePeer> cpu_expr_reduce_peers() { return {{"openmp loop", &any_expr, &expr_in_type}}; }

std::vector<ReducePeer> cpu_reduce_peers() {
  return {{"openmp reduction", false, &any, &in_type}, {"openmp reduction, f64 acc", false, &not_f64, &in_double}};
}

}  // namespace ew::bench

// What a user writes without the library: one OpenMP loop per formula, each element
// computed once, nothing stored in between. -O3 -march=native vectorizes all but the
// exp, which stays a libm call per element (glibc's vector exp needs -ffast-math).
// 16-bit data is widened to float, computed in float and rounded back once.
#include "cpu/expr_peers.hpp"

#include <algorithm>
#include <cmath>

namespace ew::bench {

namespace {

// Each loop over elements of T computes in C (T itself, or float for 16-bit data, which
// a user widens, computes in float and rounds back once, as ew's ops define it).
template <class T, class C>
void relu(std::ptrdiff_t n, const T* __restrict x, T* __restrict y) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = T(std::max(C(x[i]), C(0)));
}

// x * sigmoid(x) as a user writes it: x / (1 + exp(-x)).
template <class T, class C>
void silu(std::ptrdiff_t n, const T* __restrict x, T* __restrict y) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) {
    const C v = C(x[i]);
    y[i] = T(v / (C(1) + std::exp(-v)));
  }
}

// c = a*b + c*d, in place on c.
template <class T, class C>
void dot4(std::ptrdiff_t n, const T* __restrict a, const T* __restrict b, T* __restrict c, const T* __restrict d) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) c[i] = T(C(a[i]) * C(b[i]) + C(c[i]) * C(d[i]));
}

template <class T, class C>
void clamp(std::ptrdiff_t n, const T* __restrict a, const T* __restrict b, T* __restrict y, C s, C lo, C hi) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = T(std::min(std::max(s * C(a[i]) + C(b[i]), lo), hi));
}

// The 3-step chain t = a + b; t = s*t; y = t + c, fused by hand into one loop.
template <class T, class C>
void chain3(std::ptrdiff_t n, const T* __restrict a, const T* __restrict b, const T* __restrict c, T* __restrict y,
            C s) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = T(s * (C(a[i]) + C(b[i])) + C(c[i]));
}

template <class T, class C = T>
bool run(const std::string& name, std::size_t count, const void* const* inputs, void* out, const double* params) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(count);
  const auto in = [&](int k) { return static_cast<const T*>(inputs[k]); };
  T* y = static_cast<T*>(out);
  const auto p = [&](int k) { return static_cast<C>(params[k]); };
  if (name == "relu") relu<T, C>(n, in(0), y);
  else if (name == "silu") silu<T, C>(n, in(0), y);
  else if (name == "dot4") dot4<T, C>(n, in(0), in(1), y, in(3));
  else if (name == "clamp") clamp<T, C>(n, in(0), in(1), y, p(0), p(1), p(2));
  else if (name == "chain3") chain3<T, C>(n, in(0), in(1), in(2), y, p(0));
  else return false;
  return true;
}

}  // namespace

bool run_expr_peer(const std::string& name, DType dtype, std::size_t n, const void* const* inputs, void* out,
                   const double* params) {
  switch (dtype) {
    case DType::f32: return run<float>(name, n, inputs, out, params);
    case DType::f64: return run<double>(name, n, inputs, out, params);
    // 16-bit data as bench/cpu/peers.cpp's op loops take it: f16 through the compiler's
    // _Float16 (F16C/AVX512-FP16 conversions under -march=native), bf16, which GCC 12 has
    // no arithmetic type for, through the library's storage type.
#if defined(__FLT16_MAX__)
    case DType::f16: return run<_Float16, float>(name, n, inputs, out, params);
#else
    case DType::f16: return run<half, float>(name, n, inputs, out, params);
#endif
    case DType::bf16: break;
  }
  return run<bfloat16, float>(name, n, inputs, out, params);
}

}  // namespace ew::bench

// What a user writes without the library: one OpenMP loop per formula, each element
// computed once, nothing stored in between. -O3 -march=native vectorizes all but the
// exp, which stays a libm call per element (glibc's vector exp needs -ffast-math).
#include "cpu/expr_peers.hpp"

#include <algorithm>
#include <cmath>

namespace ew::bench {

namespace {

template <class T>
void relu(std::ptrdiff_t n, const T* __restrict x, T* __restrict y) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = std::max(x[i], T(0));
}

// x * sigmoid(x) as a user writes it: x / (1 + exp(-x)).
template <class T>
void silu(std::ptrdiff_t n, const T* __restrict x, T* __restrict y) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = x[i] / (T(1) + std::exp(-x[i]));
}

// c = a*b + c*d, in place on c.
template <class T>
void dot4(std::ptrdiff_t n, const T* __restrict a, const T* __restrict b, T* __restrict c, const T* __restrict d) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) c[i] = a[i] * b[i] + c[i] * d[i];
}

template <class T>
void clamp(std::ptrdiff_t n, const T* __restrict a, const T* __restrict b, T* __restrict y, T s, T lo, T hi) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = std::min(std::max(s * a[i] + b[i], lo), hi);
}

// The 3-step chain t = a + b; t = s*t; y = t + c, fused by hand into one loop.
template <class T>
void chain3(std::ptrdiff_t n, const T* __restrict a, const T* __restrict b, const T* __restrict c, T* __restrict y,
            T s) {
#pragma omp parallel for schedule(static)
  for (std::ptrdiff_t i = 0; i < n; ++i) y[i] = s * (a[i] + b[i]) + c[i];
}

template <class T>
bool run(const std::string& name, std::size_t count, const void* const* inputs, void* out, const double* params) {
  const std::ptrdiff_t n = static_cast<std::ptrdiff_t>(count);
  const auto in = [&](int k) { return static_cast<const T*>(inputs[k]); };
  T* y = static_cast<T*>(out);
  const auto p = [&](int k) { return static_cast<T>(params[k]); };
  if (name == "relu") relu<T>(n, in(0), y);
  else if (name == "silu") silu<T>(n, in(0), y);
  else if (name == "dot4") dot4<T>(n, in(0), in(1), y, in(3));
  else if (name == "clamp") clamp<T>(n, in(0), in(1), y, p(0), p(1), p(2));
  else if (name == "chain3") chain3<T>(n, in(0), in(1), in(2), y, p(0));
  else return false;
  return true;
}

}  // namespace

bool run_expr_peer(const std::string& name, DType dtype, std::size_t n, const void* const* inputs, void* out,
                   const double* params) {
  return dtype == DType::f32 ? run<float>(name, n, inputs, out, params) : run<double>(name, n, inputs, out, params);
}

}  // namespace ew::bench

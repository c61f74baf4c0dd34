// OpenMP reduction loops (bench/reduce_peers.hpp), compiled -O3 -march=native like the
// other CPU peers: `parallel for simd reduction(+:)`, static schedule.
#include <cmath>

#include "reduce_peers.hpp"

namespace ew::bench {

namespace {

template <class Acc, class T>
Acc reduce(Reduction r, std::size_t n, const T* x, const T* y) {
  Acc s = 0;
  if (r == Reduction::sum) {
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += static_cast<Acc>(x[i]);
  } else if (r == Reduction::dot) {
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += static_cast<Acc>(x[i]) * static_cast<Acc>(y[i]);
  } else {  // unscaled: what a user's loop does (it overflows where norm2 does not)
#pragma omp parallel for simd reduction(+ : s) schedule(static)
    for (std::size_t i = 0; i < n; ++i) s += static_cast<Acc>(x[i]) * static_cast<Acc>(x[i]);
    s = std::sqrt(s);
  }
  return s;
}

bool any(Reduction, DType, std::size_t) { return true; }
bool f32_only(Reduction, DType d, std::size_t) { return d == DType::f32; }

double in_type(Reduction r, DType d, std::size_t n, const void* x, const void* y, void*) {
  if (d == DType::f32) return reduce<float>(r, n, static_cast<const float*>(x), static_cast<const float*>(y));
  return reduce<double>(r, n, static_cast<const double*>(x), static_cast<const double*>(y));
}
double in_double(Reduction r, DType, std::size_t n, const void* x, const void* y, void*) {
  return reduce<double>(r, n, static_cast<const float*>(x), static_cast<const float*>(y));
}

}  // namespace

std::vector<ReducePeer> cpu_reduce_peers() {
  return {{"openmp reduction", false, &any, &in_type}, {"openmp reduction, f64 acc", false, &f32_only, &in_double}};
}

}  // namespace ew::bench

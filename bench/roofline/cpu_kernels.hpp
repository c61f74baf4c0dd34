#pragma once
// Single-thread CPU kernels for the ceilings and the intensity probe. cpu_kernels.cpp
// is compiled once per x86-64 level (baseline, v3 = AVX2+FMA, v4 = AVX-512) and
// the best level this CPU runs is picked at run time; the caller splits the work
// over OpenMP threads, each thread calling one kernel on its own chunk.
#include <cstddef>

namespace ew::roofline::cpu {

struct Kernels {
  const char* isa;       // "x86-64-v4", "x86-64-v3", "baseline"
  std::size_t vector_bytes;
  // Bandwidth kernels on float arrays; n is a multiple of 256 and pointers are 64-byte aligned.
  double (*read_sum)(const float* a, std::size_t n);
  void (*copy)(const float* a, float* c, std::size_t n);
  void (*copy_stream)(const float* a, float* c, std::size_t n);   // non-temporal stores
  void (*triad)(const float* a, const float* b, float* c, std::size_t n);
  void (*triad_stream)(const float* a, const float* b, float* c, std::size_t n);
  void (*fill_stream)(float* c, std::size_t n);
  void (*update)(float* a, std::size_t n);  // a = f(a) in place: read + write, no RFO
  // Independent FMA chains in registers; returns a value to keep the work alive.
  double (*fma_peak_f32)(std::size_t iterations);
  double (*fma_peak_f64)(std::size_t iterations);
  std::size_t fma_flops_per_iteration_f32, fma_flops_per_iteration_f64;
  // y[i] = f(x[i]) with k dependent FMAs per element (independent across elements).
  void (*intensity_f32)(const float* x, float* y, std::size_t n, int k);
  void (*intensity_f64)(const double* x, double* y, std::size_t n, int k);
};

// The kernels of the best level this CPU supports.
const Kernels& best_kernels();

}  // namespace ew::roofline::cpu

#pragma once
// Shared types of ew-roofline: what one run measures and reports. Every figure is a
// median over repetitions of timed batches, with the spread kept beside it.
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include "ew/ops.hpp"

namespace ew::roofline {

// Where operands live: host memory (CPU backends, CPU peers) or CUDA device memory.
enum class Place { host, device };
constexpr const char* to_string(Place p) { return p == Place::host ? "cpu" : "gpu"; }

// cold: every call works on memory that the previous calls evicted from the caches
// (inputs rotate through an arena larger than the last-level cache); warm: the same
// operands again and again.
enum class Cache { cold, warm };
constexpr const char* to_string(Cache c) { return c == Cache::cold ? "cold" : "warm"; }

// A point whose slowest batch took more than this many times its median is unsteady:
// the table, the JSON and the picture mark it (a median hides a call that collapses in
// some batches).
constexpr double unsteady_spread = 1.5;

// Seconds per call: median and extremes over `reps` timed batches.
struct Stats {
  double median = 0, min = 0, max = 0;
  int reps = 0;
  double spread() const { return median > 0 ? max / median : 0; }  // slowest batch / median
  bool unsteady() const { return spread() > unsteady_spread; }
};

inline Stats summarize(std::vector<double> seconds) {
  Stats s;
  if (seconds.empty()) return s;
  std::sort(seconds.begin(), seconds.end());
  std::size_t m = seconds.size();
  s.median = m % 2 ? seconds[m / 2] : 0.5 * (seconds[m / 2 - 1] + seconds[m / 2]);
  s.min = seconds.front();
  s.max = seconds.back();
  s.reps = static_cast<int>(m);
  return s;
}

// One measured ceiling kernel: bandwidth (GB/s) or arithmetic rate (GFLOP/s).
struct CeilingKernel {
  std::string kind;   // "memory", "cache" or "fma"
  std::string name;   // what ran, e.g. "copy, streaming stores"
  std::string dtype;  // for "fma": f32 or f64
  double value = 0;   // GB/s or GFLOP/s of the fastest repetition (a ceiling is what the machine can do)
  Stats stats;
};

// The ceilings of one device, reduced from its kernels.
struct Ceilings {
  Place place = Place::host;
  double memory_gbps = 0;  // best memory kernel
  std::string memory_kernel;
  double cache_gbps = 0;   // best cache-resident kernel
  std::string cache_label; // which cache, e.g. "L2 (all SMs)"
  double fma_gflops_f32 = 0, fma_gflops_f64 = 0;
  double spec_gbps = 0;    // 0: unknown (CPUs)
  std::vector<CeilingKernel> kernels;

  void add(CeilingKernel k) {
    if (k.kind == "memory" && k.value > memory_gbps) memory_gbps = k.value, memory_kernel = k.name;
    if (k.kind == "cache" && k.value > cache_gbps) cache_gbps = k.value;
    if (k.kind == "fma" && k.dtype == "f32") fma_gflops_f32 = std::max(fma_gflops_f32, k.value);
    if (k.kind == "fma" && k.dtype == "f64") fma_gflops_f64 = std::max(fma_gflops_f64, k.value);
    kernels.push_back(std::move(k));
  }
  double fma_gflops(DType d) const { return d == DType::f32 ? fma_gflops_f32 : fma_gflops_f64; }
};

// One timed (library backend or peer) x op x dtype x n x cache state.
struct Result {
  std::string target;  // backend name ("highway") or peer name ("cub::DeviceTransform")
  bool peer = false;
  Place place = Place::host;
  Op op = Op::copy;
  DType dtype = DType::f32;
  std::size_t n = 0;
  Cache cache = Cache::cold;
  Stats seconds;
  double gbps = 0;  // counted bytes (op table) / median seconds
  bool verified = false;
  // Filled in after every target ran:
  double pct_of_measured_ceiling = -1, pct_of_spec = -1;  // -1: unknown
  // Of the fastest ceiling kernel that moves the op's kind of traffic (see finalize()).
  double pct_of_traffic_ceiling = -1;
  double ratio_to_best_peer = -1;
  std::string best_peer;
};

// The arithmetic-intensity probe: y = f(x) with k dependent FMAs per element, a
// bench kernel that characterizes the device (not a library op).
struct IntensityPoint {
  Place place = Place::host;
  DType dtype = DType::f32;
  int k = 1;
  std::size_t n = 0;
  Stats seconds;
  double flop_per_byte = 0, gflops = 0, gbps = 0;

  // y[i] = f(x[i]) with k FMAs: 2k flops and one element read and one written per element.
  static IntensityPoint measured(Place place, DType dtype, int k, std::size_t n, const Stats& s) {
    IntensityPoint p;
    p.place = place, p.dtype = dtype, p.k = k, p.n = n, p.seconds = s;
    const double flops = 2.0 * k * double(n), bytes = 2.0 * double(size_of(dtype)) * double(n);
    p.flop_per_byte = flops / bytes;
    p.gflops = flops / s.median / 1e9;
    p.gbps = bytes / s.median / 1e9;
    return p;
  }
};

// One rung of the GPU optimization ladder (--ladder).
struct LadderStep {
  std::string group;  // "c = a + b, device", "saxpy, device", "c = a + b, host arrays"
  std::string name;
  std::size_t n = 0;
  Stats seconds;
  double gbps = 0;
  double pct_of_ceiling = -1;  // of the measured HBM ceiling (device) or the transfer floor (host)
  double gain = -1;            // over the previous step of the group
  bool verified = false;
  std::string note;
};

// Machine description for the report.
struct Machine {
  std::string cpu_model;
  int cpu_cores = 0;    // logical CPUs the process may use
  std::size_t llc_bytes = 0, l2_bytes = 0;
  std::string gpu_model;  // empty: none usable
  int gpu_sms = 0;
  std::size_t gpu_memory_bytes = 0, gpu_l2_bytes = 0;
  std::string gpu_driver, cuda_runtime;
  std::string library_version;
  struct Backend {
    std::string name;
    bool compiled = false, usable = false;
    std::string detail, reason;
  };
  std::vector<Backend> backends;
};

}  // namespace ew::roofline

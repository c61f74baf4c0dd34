#pragma once
// The reductions section of ew-roofline (issue 16): sum, dot and norm2 (ew/reduce.hpp) on
// every usable backend, next to the peers that run where the backend runs (OpenMP
// reduction loops on the CPU; cub::DeviceReduce and cuBLAS on the GPU). Bandwidth counts
// every input read once (dot reads two arrays), the call ending with the value on the
// host for all of them. Library results are checked bit for bit against the scalar
// backend's; peers (not reproducible) within a relative tolerance of it.
#include <cstdio>
#include <string>
#include <vector>

#include "ew/backend.hpp"
#include "progress.hpp"
#include "roofline.hpp"

namespace ew::roofline {

struct Report;

struct ReductionResult {
  std::string reduction;  // "sum", "dot", "norm2"
  std::string target;     // backend name or peer name
  bool peer = false;
  bool reproducible = true;  // the library: same bits on every backend; peers: no
  Place place = Place::host;
  DType dtype = DType::f32;
  std::size_t n = 0;
  int bytes_per_element = 0;
  Stats seconds;
  double gbps = 0;
  bool verified = false;
  double pct_of_measured_ceiling = -1;  // -1: unknown
  double ratio_to_best_peer = -1;       // GB/s over the fastest peer's at the same point
  std::string best_peer;
};

struct ReductionPlan {
  std::vector<Backend> backends;  // empty: every usable one (--quick: not scalar)
  std::vector<DType> dtypes;
  std::vector<int> host_log2, device_log2;
  bool peers = true;
  bool quick = false;
  int reps = 7;
  double host_gbps = 0, device_gbps = 0;  // measured memory ceilings (0: unknown)
};

std::vector<ReductionResult> measure_reductions(const ReductionPlan& plan, Progress& progress);
void print_reductions(const Report& r, std::FILE* out);

}  // namespace ew::roofline

#pragma once
// The expressions section of ew-roofline (issues 11 and 12): a fixed set of user formulas,
// each timed three ways on the same operands, interleaved point by point:
//   fused    one compiled ew::Kernel, on every backend measured (on a GPU: cuda's kernel
//            generated at run time, kokkos's evaluator);
//   unfused  the same work with the fixed ops through temporaries, where such a
//            sequence exists (dot4, chain3), on the same backend;
//   peer     on the host an OpenMP loop of the same formula (bench/cpu/expr_peers.cpp); on
//            a GPU cub::DeviceTransform with the formula as a functor compiled ahead of time
//            (bench/cuda/expr_peers.cu), the hand-written fused kernel.
// Bandwidth counts the distinct inputs read once plus the outputs written once, for all
// three, so every ratio of GB/s is a ratio of times. Also: the cost of one Kernel call on
// 16 elements next to the fixed op add's.
#include <cstdio>
#include <string>
#include <vector>

#include "ew/backend.hpp"
#include "progress.hpp"
#include "roofline.hpp"

namespace ew::roofline {

struct Report;

// One timed (expression, dtype, n, cache state, method, target).
struct ExprResult {
  std::string expression;  // "relu", "silu", "dot4", "clamp", "chain3"
  std::string formula;     // "y = max(x, 0)"
  std::string method;      // "fused", "unfused" or "peer"
  std::string target;      // backend name (fused, unfused) or peer name
  std::string fixed_ops;   // the fixed ops of the unfused sequence; empty: none exists
  Place place = Place::host;
  DType dtype = DType::f32;
  std::size_t n = 0;
  Cache cache = Cache::cold;
  int nodes = 0;           // operations of the compiled program (inputs, params and constants included)
  bool transcendental = false;
  int bytes_per_element = 0;
  bool available = true;   // false: this target cannot run it here, `reason` says why
  std::string reason;
  Stats seconds;
  double gbps = 0;
  bool verified = false;
  double pct_of_measured_ceiling = -1;  // -1: unknown
  double ratio_to_peer = -1;            // GB/s over the peer's at the same point (fused, unfused)
  double ratio_to_unfused = -1;         // fused GB/s over unfused on the same backend
};

// Seconds of one call on a handful of elements: a Kernel's and a fixed op's.
struct CallCost {
  std::string backend, what;
  std::size_t n = 0;
  Stats seconds;
};

struct ExprPlan {
  std::vector<Backend> backends;  // as --backends (empty: every usable one; --quick: not scalar where another runs)
  std::vector<std::string> expressions;  // names, in the catalog's order
  std::vector<DType> dtypes;
  std::vector<int> log2_sizes;         // backends whose memory is on the host
  std::vector<int> device_log2_sizes;  // backends whose memory is on the GPU
  bool cold = true, warm = true;
  bool peers = true;
  bool read_pass = false;  // also a read-only pass over each point's bytes, on the GPU (--read-pass)
  bool quick = false;
  int reps = 7;
  std::size_t cold_bytes = 0, device_cold_bytes = 0;  // rotation footprints for cold runs
  double memory_gbps = 0, device_gbps = 0;  // the measured memory ceilings, for percentages (0: unknown)
};

struct ExprSection {
  std::vector<ExprResult> results;
  std::vector<CallCost> call_costs;
};

// Every expression of the catalog, in its order: relu, silu, dot4, clamp, chain3.
const std::vector<std::string>& expression_names();
// What --quick measures unless told otherwise.
std::vector<std::string> quick_expressions();

ExprSection measure_expressions(const ExprPlan& plan, Progress& progress);

// The section of the table (stdout), and of the SVG: a fragment placed at y0, `height` set
// to the height it takes (0 and "" when there is nothing to draw).
void print_expressions(const Report& r, std::FILE* out);
std::string expressions_svg(const Report& r, double y0, double width, double& height);

}  // namespace ew::roofline

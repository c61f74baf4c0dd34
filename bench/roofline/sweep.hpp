#pragma once
// The measurement sweep: every usable library backend and every peer, over ops,
// dtypes, sizes and cache states, on shared operands.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "progress.hpp"
#include "roofline.hpp"

namespace ew::roofline {

// One call's operands; for in-place ops (axpy, axpby) b == out.
struct Call {
  Op op;
  DType dtype;
  std::size_t n;
  const void* a;
  const void* b;
  void* out;
  double s, t;
};

// Something to time: a library backend (through ew::Context and ew::run) or a peer.
struct Target {
  std::string name;
  bool peer = false;
  Place place = Place::host;
  bool events = false;  // time with CUDA events on gpu::stream() (else host clock + sync)
  bool exact = true;    // must match ew::apply bit for bit (library backends)
  std::function<bool(Op, DType)> supports;
  std::function<void(const Call&)> run;
  std::function<void()> sync;
  std::shared_ptr<void> keep_alive;  // the ew::Context behind a library target
};

struct Skipped {
  std::string name, reason;
};

// The library backends asked for (empty: the defaults, see Options) and the peers
// that run where those backends run. Unusable backends land in `skipped`.
std::vector<Target> make_targets(const std::vector<Backend>& requested, bool quick, bool peers,
                                 std::vector<Skipped>& skipped);

struct Plan {
  std::vector<Op> ops;
  std::vector<DType> dtypes;
  std::vector<int> host_log2, device_log2;
  bool cold = true, warm = true;
  int reps = 7;
  bool quick = false;
  std::size_t host_cold_bytes = 0, device_cold_bytes = 0;  // rotation footprint for cold runs
};

long count_points(const Plan& plan, const std::vector<Target>& targets);
std::vector<Result> run_sweep(const Plan& plan, std::vector<Target>& targets, Progress& progress);

}  // namespace ew::roofline

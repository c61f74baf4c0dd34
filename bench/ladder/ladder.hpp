#pragma once
// The GPU optimization ladder of `ew-roofline --ladder`: the steps the literature on
// elementwise kernels walks through, measured side by side on the GPU at hand, each
// verified against ew::apply, ending with the library's own cuda backend. These
// kernels live in bench/ only; the library does not use them.
#include <functional>
#include <string>
#include <vector>

#include "roofline.hpp"

namespace ew::roofline::ladder {

struct Settings {
  double hbm_ceiling_gbps = 0;  // measured memory ceiling, for "% of ceiling"
  bool quick = false;
  int reps = 7;
  std::function<void(const std::string&)> progress;  // called before each step
};

// Runs on gpu::stream(); throws std::runtime_error on a CUDA error.
std::vector<LadderStep> run(const Settings& s);

}  // namespace ew::roofline::ladder

#pragma once
// Command line of ew-roofline.
#include <stdexcept>
#include <string>
#include <vector>

#include "ew/ops.hpp"

namespace ew::roofline {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::vector<Backend> backends;  // empty: every usable backend (--quick: all but scalar where another runs)
  std::vector<Op> ops;            // empty: all
  std::vector<DType> dtypes;      // empty: both
  std::vector<int> sizes_log2;    // empty: defaults per device
  bool quick = false;
  bool cold = true, warm = true;
  int reps = 0;  // 0: 7, or 3 with --quick
  bool ladder = false;
  bool peers = true;
  bool read_pass = false;  // --read-pass
  // The expressions section (expressions.hpp): which ones (empty: all; --quick: silu, chain3),
  // none at all, or nothing else (no fixed-op sweep, no intensity probe).
  std::vector<std::string> expressions;
  bool no_expressions = false, only_expressions = false;
  bool no_reductions = false;  // skip the reductions section (reductions.hpp)
  bool help = false;
  std::string json, plot;

  int repetitions() const { return reps > 0 ? reps : quick ? 3 : 7; }
};

// Throw UsageError naming the offending argument or variable, in one line.
Options parse(int argc, char** argv);
void check_environment();
const char* usage();

}  // namespace ew::roofline

#pragma once
// What one run of ew-roofline found, and its three renderings: the table (stdout),
// JSON (--json, schema in docs/roofline.md) and SVG (--plot, plot.cpp).
#include <cstdio>
#include <string>
#include <vector>

#include "expressions.hpp"
#include "reductions.hpp"
#include "roofline.hpp"
#include "sweep.hpp"

namespace ew::roofline {

struct Report {
  Machine machine;
  std::string date;  // UTC, ISO 8601
  bool quick = false;
  int reps = 0;
  std::vector<Ceilings> ceilings;  // one per device measured
  std::vector<Result> results;     // library backends and peers
  std::vector<IntensityPoint> intensity;
  std::vector<LadderStep> ladder;
  std::string ladder_skipped;      // why --ladder did not run, if asked for
  std::vector<Skipped> skipped;    // backends asked for that could not run, with the reason
  std::vector<ExprResult> expressions;           // the expressions section (expressions.hpp)
  std::vector<CallCost> expression_call_costs;
  std::vector<ReductionResult> reductions;       // the reductions section (reductions.hpp)
  double elapsed_seconds = 0;

  const Ceilings* ceilings_of(Place p) const {
    for (const Ceilings& c : ceilings)
      if (c.place == p) return &c;
    return nullptr;
  }
};

// Percent of the measured memory ceiling and of the spec, ratio to the best peer
// measured on the same device, op, dtype, n and cache state.
void finalize(Report& r);
void print_table(const Report& r, std::FILE* out);
void write_json(const Report& r, const std::string& path);
void write_svg(const Report& r, const std::string& path);

std::string pretty_n(std::size_t n);          // "2^20" for powers of two
std::string fixed(double v, int digits);      // printf's %.*f
std::string duration(double seconds);         // "12.34 us", "5.678 ms", "1.234 s"
std::string xml_escape(const std::string& s); // & < > for the SVG's text

}  // namespace ew::roofline

#pragma once
// Random expressions: trees and DAGs (a subexpression reused, within the depth limit)
// up to depth 8 over every operator and function of ew/expr.hpp, plain numbers of
// every C++ type the API takes, params, 1-8 input slots of mixed dtypes (f32, f64 and
// the 16-bit f16 and bf16, which make 16-bit nodes and outputs where they meet only their
// own kind, and casts to every dtype), 1-2 outputs.
// One seed gives one case (expression, params, data), so a failure replays alone.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "expr_support.hpp"

namespace ew::test {

struct GeneratedCase {
  std::vector<Expr> outputs;
  std::vector<DType> input_dtype;  // per slot the generator may read
  std::vector<DType> param_dtype;  // per param slot
  std::vector<double> params;
  int depth = 0;                   // the deepest output's depth (a leaf alone is 0)
};

class ExprGenerator {
 public:
  explicit ExprGenerator(std::uint64_t seed) : rng_(seed) {}

  GeneratedCase next() {
    GeneratedCase g;
    pool_.clear();
    // Slots: usually 0..k-1, sometimes spread up to the last slot the API allows.
    const int inputs = uniform(1, 8);
    const bool spread = chance(0.15);
    g.input_dtype.assign(spread ? max_expr_inputs : inputs, DType::f32);
    slots_.clear();
    for (int k = 0; k < inputs; ++k) {
      int slot = k;
      if (spread)
        do slot = uniform(0, max_expr_inputs - 1);
        while (std::find(slots_.begin(), slots_.end(), slot) != slots_.end());
      slots_.push_back(slot);
    }
    // Half of the cases stay with f32 and f64 (as before 16-bit data); in the other half
    // a slot is 16-bit two times in three, and one 16-bit type dominates, so that whole
    // subexpressions (and outputs) are of that type.
    const bool sixteen = chance(0.5);
    const DType main16 = chance(0.5) ? DType::f16 : DType::bf16;
    const auto pick = [&] {
      if (sixteen && chance(0.67)) return chance(0.8) ? main16 : (main16 == DType::f16 ? DType::bf16 : DType::f16);
      return chance(0.5) ? DType::f32 : DType::f64;
    };
    for (DType& d : g.input_dtype) d = pick();
    const int params = chance(0.3) ? 0 : uniform(1, chance(0.1) ? max_expr_params : 4);
    for (int k = 0; k < params; ++k) {
      g.param_dtype.push_back(pick());
      g.params.push_back(chance(0.05) ? special_number() : std::ldexp(real(-2, 2), uniform(-4, 4)));
    }
    g_ = &g;
    max_depth_ = uniform(1, 8);
    budget_ = uniform(4, 120);
    const int outputs = chance(0.5) ? 1 : 2;
    for (int k = 0; k < outputs; ++k) {
      Node out;
      if (k > 0 && !pool_.empty() && chance(0.4)) out = pool_[uniform_index(pool_.size())];  // shares with output 0
      else out = chance(0.03) ? leaf() : node(0);
      g.outputs.push_back(out.e);
      g.depth = std::max(g.depth, out.height);
    }
    return g;
  }

  // Many values live at once: `count` distinct subexpressions (each with its own
  // constant, which evaluators keep for the whole call), all used twice, far apart.
  GeneratedCase many_live_values(int count) {
    GeneratedCase g;
    g.input_dtype = {DType::f32, DType::f64};
    const Expr x = input(0, DType::f32), y = input(1, DType::f64);
    std::vector<Expr> parts;
    for (int k = 0; k < count; ++k) parts.push_back(k % 2 ? x * Expr(1.0 + k / 64.0) : y - Expr(k * 0.25));
    Expr sum = parts[0];
    for (int k = 1; k < count; ++k) sum = sum + parts[k];
    Expr product = sum;
    for (int k = count - 1; k >= 0; --k) product = ew::fma(parts[k], Expr(0.5), product);
    g.outputs = {product, cast<float>(sum)};
    return g;
  }

  std::mt19937_64& engine() { return rng_; }

 private:
  struct Node {
    Expr e;
    int height = 0;
  };

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  std::size_t uniform_index(std::size_t n) { return std::uniform_int_distribution<std::size_t>(0, n - 1)(rng_); }
  double real(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return real(0, 1) < p; }

  double special_number() {
    static const double values[] = {0.0, -0.0, std::numeric_limits<double>::infinity(),
                                    -std::numeric_limits<double>::infinity(),
                                    std::numeric_limits<double>::quiet_NaN(), 1e-310, 1e300, 3.5e38};
    return values[uniform_index(sizeof values / sizeof *values)];
  }

  // A plain number as the API takes it: double, float or int (each its own overload).
  Expr number() {
    static const double common[] = {0, 1, -1, 2, 0.5, -0.5, 3, 0.1, 1e-3, 100, -0.0, 1e30, 1e-30, 0.25, 1.5, 2.5};
    const double v = chance(0.1) ? special_number()
                     : chance(0.6) ? common[uniform_index(sizeof common / sizeof *common)]
                                   : std::ldexp(real(-2, 2), uniform(-10, 10));
    switch (uniform(0, 2)) {
      case 0: return Expr(v);
      case 1: return Expr(static_cast<float>(v));
      default: return Expr(static_cast<int>(std::isfinite(v) && std::fabs(v) < 1e6 ? v * 4 : 7));
    }
  }

  Node leaf() {
    const double r = real(0, 1);
    if (r < 0.6 || (r < 0.8 && g_->params.empty())) {
      const int slot = slots_[uniform_index(slots_.size())];
      return {input(slot, g_->input_dtype[slot]), 0};
    }
    if (r < 0.8) {
      const int k = uniform(0, static_cast<int>(g_->params.size()) - 1);
      return {param(k, g_->param_dtype[k]), 0};
    }
    return {number(), 0};
  }

  // An operand of log or sqrt: mostly made non-negative, so that not everything is NaN.
  Expr domain(const Expr& a) { return chance(0.6) ? ew::abs(a) : a; }

  Node node(int depth) {
    // A subexpression built before, where it still fits under the depth limit.
    if (depth > 0 && !pool_.empty() && chance(0.15)) {
      const Node& n = pool_[uniform_index(pool_.size())];
      if (depth + n.height <= max_depth_) return n;
    }
    const double leaf_odds = 0.1 + 0.7 * depth / max_depth_;
    if (depth >= max_depth_ || budget_ <= 0 || (depth > 0 && chance(leaf_odds))) return leaf();
    --budget_;
    const int op = uniform(0, 32);
    Node a = node(depth + 1);
    Node out;
    auto one = [&](Expr e) { return Node{std::move(e), a.height + 1}; };
    if (op < 15) {
      switch (op) {
        case 0: out = one(-a.e); break;
        case 1: out = one(ew::abs(a.e)); break;
        case 2: out = one(ew::sqrt(domain(a.e))); break;
        case 3: out = one(ew::floor(a.e)); break;
        case 4: out = one(ew::ceil(a.e)); break;
        case 5: out = one(ew::trunc(a.e)); break;
        case 6: out = one(ew::round(a.e)); break;
        case 7: out = one(ew::exp(a.e)); break;
        case 8: out = one(ew::log(domain(a.e))); break;
        case 9: out = one(ew::tanh(a.e)); break;
        case 10: out = one(ew::sigmoid(a.e)); break;
        case 11: out = one(cast<float>(a.e)); break;
        case 12: out = one(cast<double>(a.e)); break;
        case 13: out = one(cast<half>(a.e)); break;
        default: out = one(cast<bfloat16>(a.e)); break;
      }
    } else if (op < 29) {
      Node b = node(depth + 1);
      auto two = [&](Expr e) { return Node{std::move(e), std::max(a.height, b.height) + 1}; };
      switch (op) {
        case 15: case 16: out = two(a.e + b.e); break;
        case 17: out = two(a.e - b.e); break;
        case 18: case 19: out = two(a.e * b.e); break;
        case 20: out = two(a.e / b.e); break;
        case 21: out = two(ew::min(a.e, b.e)); break;
        case 22: out = two(ew::max(a.e, b.e)); break;
        case 23: out = two(a.e < b.e); break;
        case 24: out = two(a.e <= b.e); break;
        case 25: out = two(a.e > b.e); break;
        case 26: out = two(a.e >= b.e); break;
        case 27: out = two(a.e == b.e); break;
        default: out = two(a.e != b.e); break;
      }
    } else {
      Node b = node(depth + 1), c = node(depth + 1);
      auto three = [&](Expr e) { return Node{std::move(e), std::max({a.height, b.height, c.height}) + 1}; };
      switch (op) {
        case 29: case 30: out = three(ew::fma(a.e, b.e, c.e)); break;
        case 31: out = three(ew::select(a.e, b.e, c.e)); break;
        default: out = three(ew::where(a.e, b.e, c.e)); break;
      }
    }
    pool_.push_back(out);
    return out;
  }

  std::mt19937_64 rng_;
  GeneratedCase* g_ = nullptr;
  std::vector<int> slots_;
  std::vector<Node> pool_;
  int max_depth_ = 8;
  int budget_ = 0;
};

// The input slots a kernel reads, from its canonical text ("input.f32 3" lines).
inline std::set<int> slots_read(const Kernel& k) {
  std::set<int> slots;
  std::istringstream text(k.str());
  std::string line;
  while (std::getline(text, line))
    if (line.rfind("input.", 0) == 0) slots.insert(std::stoi(line.substr(line.find(' ') + 1)));
  return slots;
}

}  // namespace ew::test

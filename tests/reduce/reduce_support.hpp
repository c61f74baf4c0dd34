#pragma once
// Shared by the reduction tests: one call of any reduction through the public API, its
// result as bits, data with cancellation, and an exact (double-double) reference.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

namespace ew::test {

enum class Red { sum, asum, dot, norm2, min, max };
inline constexpr Red all_reds[] = {Red::sum, Red::asum, Red::dot, Red::norm2, Red::min, Red::max};
inline const char* name(Red r) {
  static const char* const names[] = {"sum", "asum", "dot", "norm2", "min_element", "max_element"};
  return names[static_cast<int>(r)];
}

// The elements of the block plan (docs/reductions.md), repeated here on purpose: a test
// that used the library's constants could not see them change.
inline constexpr std::size_t B = 2048;
inline constexpr std::size_t L = 32;

template <class T>
struct Got {
  T value;
  std::size_t index;  // 0 for the sums
  bool operator==(const Got& o) const { return same_bits(value, o.value) && index == o.index; }
};

template <class T>
std::uint64_t bits(T v) {
  if constexpr (sizeof(T) == 4) {
    std::uint32_t b;
    std::memcpy(&b, &v, 4);
    return b;
  } else {
    std::uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
}

template <class T>
std::string show(const Got<T>& g) {
  char text[96];
  std::snprintf(text, sizeof text, "%.17g (bits %llx) @%zu", static_cast<double>(g.value),
                static_cast<unsigned long long>(bits(g.value)), g.index);
  return text;
}

template <class T>
Got<T> reduce(Context& ctx, Red r, Span<const T> x, Span<const T> y) {
  switch (r) {
    case Red::sum: return {ew::sum<T>(ctx, x), 0};
    case Red::asum: return {ew::asum<T>(ctx, x), 0};
    case Red::dot: return {ew::dot<T>(ctx, x, y), 0};
    case Red::norm2: return {ew::norm2<T>(ctx, x), 0};
    case Red::min: {
      const Extremum<T> e = ew::min_element<T>(ctx, x);
      return {e.value, e.index};
    }
    default: {
      const Extremum<T> e = ew::max_element<T>(ctx, x);
      return {e.value, e.index};
    }
  }
}

// Pairs that nearly cancel (a, -a(1 + small)) among values over 17 binades, shuffled:
// the sum is far smaller than the sum of magnitudes, so rounding shows.
template <class T>
std::vector<T> cancelling_vector(std::size_t n) {
  std::vector<T> v = random_vector<T>(n);
  std::uniform_real_distribution<T> tiny(T(-1e-3), T(1e-3));
  for (std::size_t i = 1; i < n; i += 2) v[i] = -v[i - 1] * (T(1) + tiny(rng()));
  std::shuffle(v.begin(), v.end(), rng());
  return v;
}

// Double-double accumulation: error about n 2^-106 of the sum of magnitudes, far below
// the bounds tested.
struct DoubleDouble {
  double hi = 0, lo = 0;
  void add(double x) {
    const double s = hi + x, bp = s - hi, e = (hi - (s - bp)) + (x - bp);
    hi = s;
    lo += e;
    const double t = hi + lo;
    lo = lo - (t - hi);
    hi = t;
  }
  // x * y exactly as two doubles, added.
  void add_product(double x, double y) {
    const double p = x * y;
    add(p);
    add(std::fma(x, y, -p));
  }
  double value() const { return hi + lo; }
};

}  // namespace ew::test

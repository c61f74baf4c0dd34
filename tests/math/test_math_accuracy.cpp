// The element functions of ew/detail/math.hpp through the scalar kit: the error of exp,
// log, tanh and sigmoid in ulps against the exact value (float: double libm, whose error
// is far below a float ulp; double: long double), on a sampled sweep of every float32
// bit pattern, dense sweeps where errors are largest or formulas change, random doubles
// and each function's edges; the special values; the rules of min, max and round.
#include <gtest/gtest.h>

#include <cinttypes>
#include <cstdio>
#include <string>

#include "math_test_support.hpp"

namespace ew::test::math {
namespace {

// The bound docs/expressions.md states for every function and dtype.
constexpr double documented_ulp_bound = 2.0;

template <class W>
W exact(Fn f, W x) {
  using std::exp, std::log, std::tanh;
  switch (f) {
    case Fn::exp: return exp(x);
    case Fn::log: return log(x);
    case Fn::tanh: return tanh(x);
    default: return W(1) / (W(1) + exp(-x));  // sigmoid
  }
}

// |y - r| in ulps of T at r; 0 where y is the correctly rounded infinity, infinite for a
// wrong infinity or NaN.
template <class T, class W>
double ulp_error(T y, W r) {
  if (std::isnan(r)) return std::isnan(y) ? 0 : HUGE_VAL;
  if (std::isnan(y)) return HUGE_VAL;
  const T rounded = static_cast<T>(r);
  if (std::isinf(rounded) || std::isinf(y)) return y == rounded ? 0 : HUGE_VAL;
  using L = std::numeric_limits<T>;
  W ulp = W(L::denorm_min());
  if (std::fabs(r) >= W(L::min())) ulp = std::ldexp(W(1), std::ilogb(r) - (L::digits - 1));
  return static_cast<double>(std::fabs(W(y) - r) / ulp);
}

struct Worst {
  double ulp = 0;
  double at = 0;
  std::uint64_t count = 0;
  void take(double error, double x) {
    ++count;
    if (!(error <= ulp)) ulp = error, at = x;  // NaN errors count as worst
  }
};

template <class T, class W>
void measure(Fn f, T x, Worst& worst) {
  worst.take(ulp_error(scalar(f, x), exact<W>(f, W(x))), static_cast<double>(x));
}

void report(Fn f, const char* dtype, const char* what, const Worst& w) {
  std::printf("%-8s %s %-34s max %.3f ulp at x = %a (%" PRIu64 " inputs)\n", name(f), dtype, what, w.ulp, w.at,
              w.count);
  EXPECT_LE(w.ulp, documented_ulp_bound) << name(f) << " " << dtype << " " << what << " at x = " << w.at;
}

// Every float32 bit pattern in [from, to] (both ends included, same sign) at `stride`.
template <class F>
void for_each_float(float from, float to, std::uint32_t stride, F&& visit) {
  std::uint32_t a = bits(from), b = bits(to);
  if (a > b) std::swap(a, b);
  for (std::uint64_t p = a; p <= b; p += stride) visit(from_bits<float>(static_cast<std::uint32_t>(p)));
}

// Where each function's error peaks or its formula changes, every bit pattern (or every
// few) there.
struct Region {
  float from, to;
  std::uint32_t stride;
};
std::vector<Region> dense_regions(Fn f) {
  switch (f) {
    case Fn::exp: return {{80.f, 89.f, 1}, {-87.f, -104.f, 1}, {-0.5f, -0.25f, 4}, {0.25f, 0.5f, 4}};
    case Fn::log:
      return {{0.70f, 1.42f, 1}, {0x1p-149f, 0x1p-126f, 17}, {3.0e38f, std::numeric_limits<float>::max(), 1}};
    case Fn::tanh: return {{0.5f, 1.0f, 1}, {-0.5f, -1.0f, 8}, {0x1p-12f, 0.5f, 16}};
    default: return {{-1.f, -4.f, 4}, {-80.f, -104.f, 1}, {1.f, 4.f, 16}};  // sigmoid
  }
}

class Accuracy : public testing::TestWithParam<Fn> {};

TEST_P(Accuracy, Float32SampledSweepOfAllInputs) {
  const Fn f = GetParam();
  Worst w;
  // Every 128th bit pattern, from an odd offset so that low mantissa bits vary.
  for (std::uint64_t p = 37; p <= 0xffffffffu; p += 128) measure<float, double>(f, from_bits<float>(std::uint32_t(p)), w);
  report(f, "f32", "every 128th bit pattern", w);
}

TEST_P(Accuracy, Float32DenseRegions) {
  const Fn f = GetParam();
  Worst w;
  for (const Region& r : dense_regions(f))
    for_each_float(r.from, r.to, r.stride, [&](float x) { measure<float, double>(f, x, w); });
  report(f, "f32", "dense regions", w);
}

template <class T, class W>
void edges(Fn f, Worst& w) {
  // Each special input and its 64 neighbours on both sides.
  for (T x : special_inputs<T>()) {
    T up = x, down = x;
    for (int k = 0; k < 64; ++k) {
      measure<T, W>(f, up, w);
      measure<T, W>(f, down, w);
      up = std::nextafter(up, std::numeric_limits<T>::infinity());
      down = std::nextafter(down, -std::numeric_limits<T>::infinity());
    }
  }
}

TEST_P(Accuracy, Float32Edges) {
  Worst w;
  edges<float, double>(GetParam(), w);
  report(GetParam(), "f32", "edges and their neighbours", w);
}

TEST_P(Accuracy, Float64RandomAndEdges) {
  const Fn f = GetParam();
  Worst w;
  std::mt19937_64 rng(20240611 + static_cast<int>(f));
  // The range where the result is neither saturated nor trivially exact, then any bits.
  const double lo = f == Fn::log ? 0x1p-1074 : f == Fn::exp ? -746 : f == Fn::tanh ? -20 : -746;
  const double hi = f == Fn::log ? 4 : f == Fn::exp ? 710 : f == Fn::tanh ? 20 : 40;
  std::uniform_real_distribution<double> ordinary(lo, hi), unit(-1, 1);
  for (int i = 0; i < 400000; ++i) {
    measure<double, long double>(f, ordinary(rng), w);
    measure<double, long double>(f, unit(rng), w);
    measure<double, long double>(f, from_bits<double>(rng()), w);
  }
  edges<double, long double>(f, w);
  report(f, "f64", "random and edges", w);
}

INSTANTIATE_TEST_SUITE_P(Math, Accuracy, testing::ValuesIn(transcendental_fns),
                         [](const testing::TestParamInfo<Fn>& i) { return std::string(name(i.param)); });

// Results fixed by definition, bit for bit (any NaN for NaN).
template <class T>
void expect_special_values() {
  using L = std::numeric_limits<T>;
  const T nan = L::quiet_NaN(), inf = L::infinity(), tiny = L::denorm_min(), sub = L::min() / T(4);
  struct Case {
    Fn f;
    T x, expected;
  };
  const Case cases[] = {
      {Fn::exp, nan, nan},         {Fn::exp, inf, inf},          {Fn::exp, -inf, T(0)},
      {Fn::exp, T(0), T(1)},       {Fn::exp, -T(0), T(1)},       {Fn::exp, tiny, T(1)},
      {Fn::exp, -tiny, T(1)},      {Fn::exp, L::max(), inf},     {Fn::exp, -L::max(), T(0)},
      {Fn::exp, T(1000), inf},     {Fn::exp, T(-1000), T(0)},    {Fn::log, nan, nan},
      {Fn::log, inf, inf},         {Fn::log, -inf, nan},         {Fn::log, T(0), -inf},
      {Fn::log, -T(0), -inf},      {Fn::log, T(-1), nan},        {Fn::log, -tiny, nan},
      {Fn::log, T(1), T(0)},       {Fn::tanh, nan, nan},         {Fn::tanh, inf, T(1)},
      {Fn::tanh, -inf, T(-1)},     {Fn::tanh, T(0), T(0)},       {Fn::tanh, -T(0), -T(0)},
      {Fn::tanh, tiny, tiny},      {Fn::tanh, -tiny, -tiny},     {Fn::tanh, sub, sub},
      {Fn::tanh, -sub, -sub},      {Fn::tanh, T(40), T(1)},      {Fn::tanh, T(-40), T(-1)},
      {Fn::tanh, L::max(), T(1)},  {Fn::tanh, -L::max(), T(-1)}, {Fn::sigmoid, nan, nan},
      {Fn::sigmoid, inf, T(1)},    {Fn::sigmoid, -inf, T(0)},    {Fn::sigmoid, T(0), T(0.5)},
      {Fn::sigmoid, -T(0), T(0.5)}, {Fn::sigmoid, tiny, T(0.5)}, {Fn::sigmoid, -tiny, T(0.5)},
      {Fn::sigmoid, T(800), T(1)}, {Fn::sigmoid, T(-800), T(0)}, {Fn::sigmoid, L::max(), T(1)},
      {Fn::sigmoid, -L::max(), T(0)},
  };
  for (const Case& c : cases) {
    const T y = scalar(c.f, c.x);
    if (std::isnan(c.expected))
      EXPECT_TRUE(std::isnan(y)) << name(c.f) << "(" << c.x << ") = " << y;
    else
      EXPECT_EQ(bits(y), bits(c.expected)) << name(c.f) << "(" << c.x << ") = " << y << ", not " << c.expected;
  }
  // log of the smallest subnormal and of the largest finite value, correctly rounded.
  EXPECT_EQ(scalar(Fn::log, tiny), static_cast<T>(std::log(static_cast<long double>(tiny))));
  EXPECT_EQ(scalar(Fn::log, L::max()), static_cast<T>(std::log(static_cast<long double>(L::max()))));
}

TEST(MathSpecialValues, Float32) { expect_special_values<float>(); }
TEST(MathSpecialValues, Float64) { expect_special_values<double>(); }

// round is std::round (halfway away from zero, the sign of zero kept), bit for bit.
template <class T>
void expect_round_is_std_round() {
  std::vector<T> inputs = special_inputs<T>();
  const std::vector<T> more = random_inputs<T>(200000, 7);
  inputs.insert(inputs.end(), more.begin(), more.end());
  std::mt19937_64 rng(11);
  for (int i = 0; i < 100000; ++i) {  // halves and their neighbours, where rounding decides
    const T half = static_cast<T>(static_cast<std::int64_t>(rng() % 4000000) - 2000000) + T(0.5);
    inputs.push_back(half);
    inputs.push_back(std::nextafter(half, T(0)));
    inputs.push_back(std::nextafter(half, T(1e30)));
  }
  for (T x : inputs) {
    const T y = scalar(Fn::round, x), expected = std::round(x);
    if (std::isnan(expected)) {
      ASSERT_TRUE(std::isnan(y)) << x;
    } else {
      ASSERT_EQ(bits(y), bits(expected)) << "round(" << x << ") = " << y << ", not " << expected;
    }
  }
}

TEST(MathRound, Float32IsStdRound) { expect_round_is_std_round<float>(); }
TEST(MathRound, Float64IsStdRound) { expect_round_is_std_round<double>(); }

// min and max: a NaN operand wins (the first if both are), untouched; equal operands
// (+0, -0) give the first; otherwise the smaller or larger.
template <class T>
void expect_min_max_rules() {
  using L = std::numeric_limits<T>;
  const T nan_a = from_bits<T>(bits(L::quiet_NaN()) | 0x1), nan_b = from_bits<T>(bits(L::quiet_NaN()) | 0x2);
  for (Fn f : {Fn::min, Fn::max}) {
    EXPECT_EQ(bits(scalar(f, nan_a, nan_b)), bits(nan_a)) << name(f);
    EXPECT_EQ(bits(scalar(f, nan_b, nan_a)), bits(nan_b)) << name(f);
    EXPECT_EQ(bits(scalar(f, nan_a, T(1))), bits(nan_a)) << name(f);
    EXPECT_EQ(bits(scalar(f, T(1), nan_b)), bits(nan_b)) << name(f);
    EXPECT_EQ(bits(scalar(f, -L::infinity(), nan_b)), bits(nan_b)) << name(f);
    EXPECT_EQ(bits(scalar(f, T(0), -T(0))), bits(T(0))) << name(f);
    EXPECT_EQ(bits(scalar(f, -T(0), T(0))), bits(-T(0))) << name(f);
  }
  const std::vector<T> a = random_inputs<T>(100000, 3), b = random_inputs<T>(100000, 4);
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (std::isnan(a[i]) || std::isnan(b[i]) || a[i] == b[i]) continue;
    ASSERT_EQ(bits(scalar(Fn::min, a[i], b[i])), bits(std::fmin(a[i], b[i]))) << a[i] << " " << b[i];
    ASSERT_EQ(bits(scalar(Fn::max, a[i], b[i])), bits(std::fmax(a[i], b[i]))) << a[i] << " " << b[i];
  }
}

TEST(MathMinMax, Float32Rules) { expect_min_max_rules<float>(); }
TEST(MathMinMax, Float64Rules) { expect_min_max_rules<double>(); }

}  // namespace
}  // namespace ew::test::math

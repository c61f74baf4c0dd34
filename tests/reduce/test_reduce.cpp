// Reductions on every backend: the same bits as the scalar backend for every reduction,
// dtype, size around the block boundaries and offset; the scalar backend against the
// plan as docs/reductions.md writes it (an independent implementation here); accuracy
// against a double-double reference within the documented bound; special values; n = 0;
// bad input. The cuda instantiations carry the gpu label and skip where no GPU is usable.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "reduce_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t sizes[] = {0, 1, 2, 31, 32, 33, 100, B - 1, B, B + 1, 2 * B, 3 * B + 17, 64 * B + 5, 300007};

class Reduce : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(GetParam()); }

  template <class T>
  void matches_scalar(const std::vector<T>& xs, const std::vector<T>& ys, const std::vector<std::size_t>& ns,
                      std::size_t max_offset) {
    Context ctx(GetParam());
    Context ref(Backend::scalar);
    Operand<T> x{xs, nullptr}, y{ys, nullptr};
    for (std::size_t n : ns)
      for (std::size_t off = 0; off <= max_offset; ++off)
        for (Red r : all_reds) {
          const Got<T> want = reduce<T>(ref, r, Span<const T>(xs.data() + off, n), Span<const T>(ys.data() + off, n));
          const Got<T> got = reduce<T>(ctx, r, x.span(ctx, off, n), y.span(ctx, off, n));
          ASSERT_TRUE(got == want) << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " offset " << off
                                   << ": " << show(got) << ", scalar " << show(want);
        }
  }
};

TEST_P(Reduce, SameBitsAsScalarAroundBlockBoundaries) {
  const std::size_t total = 300007 + 4;
  const std::vector<std::size_t> ns(std::begin(sizes), std::end(sizes));
  matches_scalar<float>(cancelling_vector<float>(total), random_vector<float>(total), ns, 3);
  matches_scalar<double>(cancelling_vector<double>(total), random_vector<double>(total), ns, 3);
}

TEST_P(Reduce, SameBitsAsScalarWithSpecialValues) {
  // NaN, infinities of both signs, zeros of both signs, the largest and smallest values,
  // scattered over several blocks: every reduction must agree bit for bit and index.
  const std::size_t n = special_size;
  for (int pattern = 0; pattern < special_patterns; ++pattern) {
    const auto [xd, yd] = special_vectors<double>(n + 4, pattern);
    const auto [xf, yf] = special_vectors<float>(n + 4, pattern);
    const std::vector<std::size_t> ns{n, n - 1, B + 3};
    matches_scalar<float>(xf, yf, ns, 3);
    matches_scalar<double>(xd, yd, ns, 3);
    if (HasFailure()) FAIL() << "pattern " << pattern;
  }
}

// A signaling NaN that wins min/max is returned with its sign and payload: an f64 one with
// its own bits, an f32 one made quiet (the value passes through double on every backend);
// sums with it are the default quiet NaN.
TEST_P(Reduce, SignalingNanExtremumKeepsItsSignAndPayload) {
  Context ctx(GetParam());
  const std::size_t n = 3 * B + 5;
  Operand<float> f{random_vector<float>(n), nullptr};
  Operand<double> d{random_vector<double>(n), nullptr};
  f.host[B + 1] = signaling_nan<float>(), f.host[2 * B] = std::numeric_limits<float>::quiet_NaN();
  d.host[B + 1] = signaling_nan<double>(), d.host[2 * B] = std::numeric_limits<double>::quiet_NaN();
  for (Red r : {Red::min, Red::max}) {
    const Got<float> gf = reduce<float>(ctx, r, f.span(ctx, 0, n), f.span(ctx, 0, n));
    const Got<double> gd = reduce<double>(ctx, r, d.span(ctx, 0, n), d.span(ctx, 0, n));
    EXPECT_EQ(bits(gf.value), 0xffe00005u) << name(r) << " f32: " << show(gf);
    EXPECT_EQ(gf.index, B + 1) << name(r);
    EXPECT_EQ(bits(gd.value), 0xfff4000000000005ull) << name(r) << " f64: " << show(gd);
    EXPECT_EQ(gd.index, B + 1) << name(r);
  }
  EXPECT_EQ(bits(ew::sum<float>(ctx, f.span(ctx, 0, n))), 0x7fc00000u);
  EXPECT_EQ(bits(ew::sum<double>(ctx, d.span(ctx, 0, n))), 0x7ff8000000000000ull);
}

TEST_P(Reduce, EmptyGivesTheIdentity) {
  Context ctx(GetParam());
  const Span<const double> none;
  EXPECT_TRUE(same_bits(ew::sum<double>(ctx, none), 0.0));
  EXPECT_TRUE(same_bits(ew::asum<double>(ctx, none), 0.0));
  EXPECT_TRUE(same_bits(ew::dot<double>(ctx, none, none), 0.0));
  EXPECT_TRUE(same_bits(ew::norm2<float>(ctx, Span<const float>()), 0.0f));
  const auto lo = ew::min_element<float>(ctx, Span<const float>());
  const auto hi = ew::max_element<double>(ctx, none);
  EXPECT_EQ(lo.value, std::numeric_limits<float>::infinity());
  EXPECT_EQ(lo.index, no_index);
  EXPECT_EQ(hi.value, -std::numeric_limits<double>::infinity());
  EXPECT_EQ(hi.index, no_index);
}

TEST_P(Reduce, SpecialValueRules) {
  Context ctx(GetParam());
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  const std::size_t n = 3 * B + 11;
  Operand<double> x{std::vector<double>(n, 1.0), nullptr};
  const auto run = [&](Red r) { return reduce<double>(ctx, r, x.span(ctx, 0, n), x.span(ctx, 0, n)); };
  const auto reset = [&] { x.device.reset(); };

  x.host[2 * B + 3] = inf, reset();
  EXPECT_EQ(run(Red::sum).value, inf);
  EXPECT_EQ(run(Red::norm2).value, inf);
  EXPECT_EQ(run(Red::max).index, 2 * B + 3u);
  x.host[7] = -inf, reset();
  EXPECT_TRUE(std::isnan(run(Red::sum).value));  // -inf + inf
  EXPECT_EQ(run(Red::asum).value, inf);
  EXPECT_EQ(run(Red::min).index, 7u);
  x.host[B + 9] = nan, x.host[3 * B] = nan, reset();
  for (Red r : {Red::sum, Red::asum, Red::dot, Red::norm2}) EXPECT_TRUE(std::isnan(run(r).value)) << name(r);
  EXPECT_TRUE(std::isnan(run(Red::min).value));
  EXPECT_EQ(run(Red::min).index, B + 9u);  // the first NaN
  EXPECT_EQ(run(Red::max).index, B + 9u);

  // Zeros: +0 and -0 are equal, the first wins and keeps its sign; a sum of -0s is +0.
  std::fill(x.host.begin(), x.host.end(), 1.0);
  x.host[B + 1] = -0.0, x.host[5] = 0.0, x.host[2 * B] = -0.0, reset();
  Got<double> m = run(Red::min);
  EXPECT_EQ(m.index, 5u);
  EXPECT_FALSE(std::signbit(m.value));
  std::fill(x.host.begin(), x.host.end(), -0.0);
  reset();
  m = run(Red::max);
  EXPECT_EQ(m.index, 0u);
  EXPECT_TRUE(std::signbit(m.value));
  EXPECT_TRUE(same_bits(run(Red::sum).value, 0.0));

  // Every element the identity itself (+inf for min, -inf for max): the first one wins.
  std::fill(x.host.begin(), x.host.end(), inf);
  reset();
  m = run(Red::min);
  EXPECT_EQ(m.index, 0u);
  EXPECT_EQ(m.value, inf);
  std::fill(x.host.begin(), x.host.end(), -inf);
  reset();
  m = run(Red::max);
  EXPECT_EQ(m.index, 0u);
  EXPECT_EQ(m.value, -inf);

  // The 2-norm neither overflows nor underflows.
  std::fill(x.host.begin(), x.host.end(), 1e300);
  reset();
  EXPECT_NEAR(run(Red::norm2).value / (1e300 * std::sqrt(static_cast<double>(n))), 1.0, 1e-14);
  std::fill(x.host.begin(), x.host.end(), 3e-310);
  reset();
  EXPECT_NEAR(run(Red::norm2).value / (3e-310 * std::sqrt(static_cast<double>(n))), 1.0, 1e-9);  // subnormal input
  for (std::size_t i = 0; i < n; ++i) x.host[i] = (i % 2) ? 1e-200 : 1e200;
  reset();
  EXPECT_NEAR(run(Red::norm2).value / (1e200 * std::sqrt(static_cast<double>((n + 1) / 2))), 1.0, 1e-14);
}

// |computed - exact| within the bound of docs/reductions.md:
//   gamma(h) * sum |t_i|  (+ one rounding of each f64 product or square)
//   + one f32 rounding of the result for f32 data,
// h = (lane terms - 1) + log2(32) + ceil(log2(blocks)).
template <class T>
void within_bound(Context& ctx, std::size_t n) {
  const std::vector<T> xs = cancelling_vector<T>(n), ys = random_vector<T>(n);
  Operand<T> x{xs, nullptr}, y{ys, nullptr};
  const std::size_t blocks = (n + B - 1) / B;
  const double lane_terms = static_cast<double>((std::min(n, B) + L - 1) / L);
  const double h = lane_terms - 1 + 5 + std::ceil(std::log2(static_cast<double>(blocks)));
  const double u = std::ldexp(1.0, -53), gamma = h * u / (1 - h * u);
  const double out_u = sizeof(T) == 4 ? std::ldexp(1.0, -24) : 0.0;
  const bool f64 = sizeof(T) == 8;

  DoubleDouble s, a, d, q;
  double mag_sum = 0, mag_dot = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double xi = xs[i], yi = ys[i];
    s.add(xi);
    a.add(std::fabs(xi));
    d.add_product(xi, yi);
    q.add_product(xi, xi);
    mag_sum += std::fabs(xi);
    mag_dot += std::fabs(xi * yi);
  }
  const auto check = [&](Red r, double exact, double bound) {
    const double got = static_cast<double>(reduce<T>(ctx, r, x.span(ctx, 0, n), y.span(ctx, 0, n)).value);
    EXPECT_LE(std::fabs(got - exact), bound)
        << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << ": got " << got << ", exact " << exact;
  };
  check(Red::sum, s.value(), gamma * mag_sum + out_u * std::fabs(s.value()) * 1.0000001);
  check(Red::asum, a.value(), gamma * mag_sum + out_u * a.value() * 1.0000001);
  const double dot_gamma = f64 ? (h + 1) * u / (1 - (h + 1) * u) : gamma;  // f64 products round once
  check(Red::dot, d.value(), dot_gamma * mag_dot + out_u * std::fabs(d.value()) * 1.0000001);
  const double norm = std::sqrt(q.value());
  // sqrt halves the relative error of the sum of squares and rounds once more.
  check(Red::norm2, norm, norm * (dot_gamma / 2 + 2 * u + out_u) * 1.0000001);
}

TEST_P(Reduce, WithinTheDocumentedBoundOfTheExactResult) {
  Context ctx(GetParam());
  for (std::size_t n : {std::size_t(1000), B * 7 + 3, std::size_t(1) << 20}) {
    within_bound<float>(ctx, n);
    within_bound<double>(ctx, n);
  }
}

TEST_P(Reduce, BadInputNamesTheOperand) {
  Context ctx(GetParam());
  alignas(64) static double storage[64] = {};
  const Span<const double> x(storage, 16), y(storage + 16, 16);
  expect_error(Errc::null_pointer, [&] { ew::sum<double>(ctx, Span<const double>(nullptr, 4)); }, "ew::sum: x");
  expect_error(Errc::null_pointer, [&] { ew::dot<double>(ctx, x, Span<const double>(nullptr, 16)); }, "ew::dot: y");
  expect_error(Errc::size_mismatch, [&] { ew::dot<double>(ctx, x, Span<const double>(storage, 15)); }, "ew::dot: y");
  const double* odd = reinterpret_cast<const double*>(reinterpret_cast<const char*>(storage) + 4);
  expect_error(Errc::misaligned, [&] { ew::norm2<double>(ctx, Span<const double>(odd, 3)); }, "ew::norm2: x");
  expect_error(Errc::size_overflow, [&] { ew::asum<float>(ctx, Span<const float>(reinterpret_cast<const float*>(storage), std::size_t(1) << 62)); }, "ew::asum: x");
  if (ctx.device() < 0) {
    // A context on the host cannot read device memory: the tag alone decides.
    expect_error(Errc::foreign_memory, [&] { ew::max_element<double>(ctx, Span<const double>(storage, 4, MemorySpace::device)); },
                 "ew::max_element: x");
    expect_error(Errc::foreign_memory, [&] { ew::dot<double>(ctx, x, Span<const double>(storage, 16, MemorySpace::device)); },
                 "ew::dot: y");
  } else {
    // A context on a GPU refuses pageable host memory (cuda reads device, managed and pinned
    // memory; kokkos on Cuda device and managed memory).
    expect_error(Errc::foreign_memory, [&] { ew::min_element<double>(ctx, y); }, "ew::min_element: x");
  }
}

TEST_P(Reduce, StoresIntoAResultSpan) {
  Context ctx(GetParam());
  for (std::size_t n : {std::size_t(0), std::size_t(1), 3 * B + 5}) {
    stores_into_result<float>(ctx, n);
    stores_into_result<double>(ctx, n);
  }
  // Bad result spans, and x[0] as the result (read before it is written).
  Operand<double> x{random_vector<double>(64), nullptr};
  const Span<const double> xs = x.span(ctx, 0, 64);
  double* base = const_cast<double*>(xs.data);
  expect_error(Errc::size_mismatch, [&] { ew::sum<double>(ctx, xs, Span<double>(base, 2, xs.space)); }, "ew::sum: result");
  expect_error(Errc::null_pointer, [&] { ew::asum<double>(ctx, xs, Span<double>(nullptr, 1)); }, "ew::asum: result");
  expect_error(Errc::overlap, [&] { ew::norm2<double>(ctx, xs, Span<double>(base + 5, 1, xs.space)); }, "result");
  if (ctx.device() < 0) {
    double host_slot = 0;
    expect_error(Errc::foreign_memory, [&] { ew::sum<double>(ctx, xs, Span<double>(&host_slot, 1, MemorySpace::device)); },
                 "ew::sum: result");
    const double want = ew::sum<double>(ctx, xs);
    ew::sum<double>(ctx, xs, Span<double>(base, 1, xs.space));
    EXPECT_TRUE(same_bits(x.host[0], want));
  } else {
    // Pageable memory is no result span on a GPU, whatever n (n = 0 once stored the identity
    // there): cuda reads it in its ops but stores no result in it; kokkos does not reach it.
    double host_slot = 7;
    expect_error(Errc::foreign_memory, [&] { ew::sum<double>(ctx, xs, Span<double>(&host_slot, 1)); }, "ew::sum: result");
    expect_error(Errc::foreign_memory, [&] { ew::sum<double>(ctx, xs.subspan(0, 0), Span<double>(&host_slot, 1)); },
                 GetParam() == Backend::cuda ? "ew::sum: result is host memory" : "ew::sum: result lives in host memory");
    EXPECT_EQ(host_slot, 7);
  }
}

INSTANTIATE_TEST_SUITE_P(scalar, Reduce, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, Reduce, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, Reduce, testing::Values(Backend::kokkos));
INSTANTIATE_TEST_SUITE_P(cuda, Reduce, testing::Values(Backend::cuda));

// The plan written again from docs/reductions.md, with a recursive tree (the library's
// is a binary counter): the scalar backend must give its bits.
double tree(const std::vector<double>& v, std::size_t lo, std::size_t hi) {
  if (hi - lo == 1) return v[lo];
  std::size_t half = 1;
  while (half * 2 < hi - lo) half *= 2;  // the left child: the largest power of two below the count
  return tree(v, lo, lo + half) + tree(v, lo + half, hi);
}

template <class Term>
double plan_value(std::size_t n, Term term) {
  std::vector<double> partials;
  for (std::size_t begin = 0; begin < n; begin += B) {
    std::vector<double> lane(L, 0.0);
    for (std::size_t i = begin; i < std::min(n, begin + B); ++i) lane[(i - begin) % L] += term(i);
    partials.push_back(tree(lane, 0, L));
  }
  return tree(partials, 0, partials.size());
}

TEST(ReducePlan, ScalarBackendIsThePlanAsDocumented) {
  Context ctx(Backend::scalar);
  for (std::size_t n : {std::size_t(1), std::size_t(33), B, B + 1, 13 * B + 1001, std::size_t(200003)}) {
    const auto xf = cancelling_vector<float>(n), yf = random_vector<float>(n);
    const auto xd = cancelling_vector<double>(n), yd = random_vector<double>(n);
    EXPECT_TRUE(same_bits(ew::sum<float>(ctx, xf), static_cast<float>(plan_value(n, [&](std::size_t i) { return double(xf[i]); })))) << n;
    EXPECT_TRUE(same_bits(ew::dot<float>(ctx, xf, yf),
                          static_cast<float>(plan_value(n, [&](std::size_t i) { return double(xf[i]) * double(yf[i]); }))))
        << n;
    EXPECT_TRUE(same_bits(ew::sum<double>(ctx, xd), plan_value(n, [&](std::size_t i) { return xd[i]; }))) << n;
    EXPECT_TRUE(same_bits(ew::asum<double>(ctx, xd), plan_value(n, [&](std::size_t i) { return std::fabs(xd[i]); }))) << n;
    EXPECT_TRUE(same_bits(ew::dot<double>(ctx, xd, yd), plan_value(n, [&](std::size_t i) { return xd[i] * yd[i]; }))) << n;
    EXPECT_TRUE(same_bits(ew::norm2<double>(ctx, xd), std::sqrt(plan_value(n, [&](std::size_t i) { return xd[i] * xd[i]; })))) << n;
    EXPECT_TRUE(same_bits(ew::norm2<float>(ctx, xf),
                          static_cast<float>(std::sqrt(plan_value(n, [&](std::size_t i) { return double(xf[i]) * xf[i]; })))))
        << n;
    const auto lo = std::min_element(xd.begin(), xd.begin() + n);
    const auto hi = std::max_element(xf.begin(), xf.begin() + n);
    EXPECT_EQ(ew::min_element<double>(ctx, xd).index, static_cast<std::size_t>(lo - xd.begin()));
    EXPECT_EQ(ew::max_element<float>(ctx, xf).index, static_cast<std::size_t>(hi - xf.begin()));
  }
}

}  // namespace
}  // namespace ew::test

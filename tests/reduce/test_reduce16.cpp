// Reductions of 16-bit data (ew::half, ew::bfloat16) on every backend. The rule
// (docs/reductions.md, "16-bit data"): each element is widened exactly and reduced as f32
// data are, the sums returning float. So on every backend a 16-bit reduction must give the
// bits of the same reduction of the widened array as f32 (an independent check of the
// whole path), and the scalar backend's bits for every size, offset and special value.
// The cuda instantiations carry the gpu label and skip where no GPU is usable.
#include <cmath>
#include <limits>
#include <string>

#include "reduce_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t sizes[] = {1, 2, 7, 8, 9, 31, 32, 33, 100, B - 1, B, B + 1, 2 * B, 3 * B + 17, 64 * B + 5, 100003};

template <class T>
std::vector<float> widened(const std::vector<T>& v) {
  std::vector<float> f(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) f[i] = static_cast<float>(v[i]);
  return f;
}

class Reduce16 : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(GetParam()); }

  // Every reduction of x[off, off + n) for every n and off: the scalar backend's bits, and
  // the bits of the widened data reduced as f32 (on this backend and on scalar).
  template <class T>
  void matches(const std::vector<T>& xs, const std::vector<T>& ys, const std::vector<std::size_t>& ns,
               std::size_t max_offset) {
    Context ctx(GetParam());
    Context ref(Backend::scalar);
    Operand<T> x{xs, nullptr}, y{ys, nullptr};
    Operand<float> xf{widened(xs), nullptr}, yf{widened(ys), nullptr};
    for (std::size_t n : ns)
      for (std::size_t off = 0; off <= max_offset; ++off)
        for (Red r : all_reds) {
          const Got<T> want = reduce<T>(ref, r, Span<const T>(xs.data() + off, n), Span<const T>(ys.data() + off, n));
          const Got<T> got = reduce<T>(ctx, r, x.span(ctx, off, n), y.span(ctx, off, n));
          ASSERT_TRUE(got == want) << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " offset " << off
                                   << ": " << show(got) << ", scalar " << show(want);
          const Got<float> as_f32 = reduce<float>(ctx, r, xf.span(ctx, off, n), yf.span(ctx, off, n));
          ASSERT_TRUE(same_bits(got.value, static_cast<double>(as_f32.value)) && got.index == as_f32.index)
              << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " offset " << off << ": " << show(got)
              << ", the widened data as f32 " << show(as_f32);
        }
  }
};

TEST_P(Reduce16, SameBitsAsScalarAndAsTheWidenedF32Data) {
  const std::size_t total = 64 * B + 5 + 8;
  const std::vector<std::size_t> ns(std::begin(sizes), std::end(sizes));
  matches<half>(cancelling_vector<half>(total), random_vector<half>(total), ns, 3);
  matches<bfloat16>(cancelling_vector<bfloat16>(total), random_vector<bfloat16>(total), ns, 3);
}

// NaN, infinities, signed zeros, subnormals and the largest finite values, scattered over
// several blocks (bit patterns, so that both types get their own extremes).
template <class T>
std::vector<T> with_specials(std::size_t n, int pattern) {
  std::vector<T> v = random_vector<T>(n);
  const bool f16 = std::is_same_v<T, half>;
  const std::uint16_t inf = f16 ? 0x7c00 : 0x7f80, qnan = f16 ? 0x7e00 : 0x7fc0, snan = f16 ? 0x7d01 : 0x7f81;
  const std::uint16_t max = f16 ? 0x7bff : 0x7f7f, sub = 0x0001, neg = 0x8000;
  const auto put = [&](std::size_t i, std::uint16_t bits) { v[i] = T::from_bits(bits); };
  switch (pattern) {
    case 0: put(3 * B + 5, qnan), put(B + 2, snan | neg); break;
    case 1: put(4 * B, inf), put(77, inf | neg); break;
    case 2: put(2 * B - 1, inf); break;
    case 3:
      for (std::size_t i = 0; i < n; ++i) put(i, (i % 3) ? 0 : neg);
      break;
    case 4:
      for (std::size_t i = 0; i < n; i += 5) put(i, (i % 2) ? max : max | neg);
      put(5, sub), put(6, sub | neg), put(7, 0x03ff);
      break;
    default: put(n - 1, inf | neg), put(n - 2, qnan), put(0, inf); break;
  }
  return v;
}

TEST_P(Reduce16, SameBitsWithSpecialValues) {
  const std::size_t n = 5 * B + 77;
  for (int pattern = 0; pattern < 6; ++pattern) {
    const std::vector<std::size_t> ns{n, n - 1, B + 3};
    matches<half>(with_specials<half>(n + 4, pattern), with_specials<half>(n + 4, (pattern + 3) % 6), ns, 3);
    matches<bfloat16>(with_specials<bfloat16>(n + 4, pattern), with_specials<bfloat16>(n + 4, (pattern + 3) % 6), ns,
                      3);
    if (HasFailure()) FAIL() << "pattern " << pattern;
  }
}

TEST_P(Reduce16, ResultsAreFloatAndExtremaThe16BitValue) {
  Context ctx(GetParam());
  const std::size_t n = 4 * B + 3;
  // 65504 (the largest half) n times: far past half's range, exact in float.
  Operand<half> x{std::vector<half>(n, half::from_bits(0x7bff)), nullptr};
  const float s = ew::sum<half>(ctx, x.span(ctx, 0, n));
  EXPECT_EQ(s, 65504.0f * static_cast<float>(n));
  EXPECT_EQ(ew::norm2<half>(ctx, x.span(ctx, 0, n)), static_cast<float>(65504.0 * std::sqrt(static_cast<double>(n))));
  x.host[B + 7] = half(-3.0f), x.host[3 * B] = half(70000.0f), x.changed();  // +inf
  const Extremum<half> lo = ew::min_element<half>(ctx, x.span(ctx, 0, n));
  const Extremum<half> hi = ew::max_element<half>(ctx, x.span(ctx, 0, n));
  EXPECT_EQ(lo.value.bits, half(-3.0f).bits);
  EXPECT_EQ(lo.index, B + 7);
  EXPECT_EQ(hi.value.bits, 0x7c00);
  EXPECT_EQ(hi.index, 3 * B);
  EXPECT_EQ(ew::sum<half>(ctx, x.span(ctx, 0, n)), std::numeric_limits<float>::infinity());
  // The first NaN wins, with its index.
  x.host[2 * B + 1] = half::from_bits(0xfe00), x.host[2 * B + 9] = half::from_bits(0x7e00), x.changed();
  const Extremum<half> nan = ew::max_element<half>(ctx, x.span(ctx, 0, n));
  EXPECT_TRUE(is_nan(nan.value));
  EXPECT_EQ(nan.index, 2 * B + 1);
  EXPECT_TRUE(std::isnan(ew::asum<half>(ctx, x.span(ctx, 0, n))));

  // bf16 keeps float's range: its sums round once to float, overflowing only past it.
  Operand<bfloat16> b{std::vector<bfloat16>(n, bfloat16(1e38f)), nullptr};
  EXPECT_EQ(ew::sum<bfloat16>(ctx, b.span(ctx, 0, 3)), static_cast<float>(3.0 * static_cast<double>(bfloat16(1e38f))));
  EXPECT_EQ(ew::sum<bfloat16>(ctx, b.span(ctx, 0, 4)), std::numeric_limits<float>::infinity());
  // Signed zeros: the first zero wins with its sign; a sum of -0 is +0.
  std::fill(b.host.begin(), b.host.end(), bfloat16::from_bits(0x8000));
  b.host[9] = bfloat16::from_bits(0), b.changed();
  const Extremum<bfloat16> z = ew::min_element<bfloat16>(ctx, b.span(ctx, 0, n));
  EXPECT_EQ(z.index, 0u);
  EXPECT_EQ(z.value.bits, 0x8000);
  EXPECT_TRUE(same_bits(ew::sum<bfloat16>(ctx, b.span(ctx, 0, n)), 0.0f));
}

TEST_P(Reduce16, EmptyGivesTheIdentity) {
  Context ctx(GetParam());
  EXPECT_TRUE(same_bits(ew::sum<half>(ctx, Span<const half>()), 0.0f));
  EXPECT_TRUE(same_bits(ew::dot<bfloat16>(ctx, Span<const bfloat16>(), Span<const bfloat16>()), 0.0f));
  EXPECT_TRUE(same_bits(ew::norm2<bfloat16>(ctx, Span<const bfloat16>()), 0.0f));
  const Extremum<half> lo = ew::min_element<half>(ctx, Span<const half>());
  const Extremum<bfloat16> hi = ew::max_element<bfloat16>(ctx, Span<const bfloat16>());
  EXPECT_EQ(lo.value.bits, 0x7c00);
  EXPECT_EQ(lo.index, no_index);
  EXPECT_EQ(hi.value.bits, 0xff80);
  EXPECT_EQ(hi.index, no_index);
}

TEST_P(Reduce16, BadInputNamesTheOperand) {
  Context ctx(GetParam());
  alignas(64) static half storage[64] = {};
  const Span<const half> x(storage, 16), y(storage + 16, 16);
  expect_error(Errc::null_pointer, [&] { ew::sum<half>(ctx, Span<const half>(nullptr, 4)); }, "ew::sum: x");
  expect_error(Errc::size_mismatch, [&] { ew::dot<half>(ctx, x, Span<const half>(storage, 15)); }, "ew::dot: y");
  const half* odd = reinterpret_cast<const half*>(reinterpret_cast<const char*>(storage) + 1);
  expect_error(Errc::misaligned, [&] { ew::norm2<half>(ctx, Span<const half>(odd, 3)); }, "ew::norm2: x");
  expect_error(Errc::size_overflow,
               [&] { ew::asum<bfloat16>(ctx, Span<const bfloat16>(reinterpret_cast<const bfloat16*>(storage), std::size_t(1) << 63)); },
               "ew::asum: x");
  if (ctx.device() < 0) {
    expect_error(Errc::foreign_memory, [&] { ew::max_element<half>(ctx, Span<const half>(storage, 4, MemorySpace::device)); },
                 "ew::max_element: x");
  } else {
    expect_error(Errc::foreign_memory, [&] { ew::min_element<half>(ctx, y); }, "ew::min_element: x");
  }
}

TEST_P(Reduce16, StoresAFloatIntoAResultSpan) {
  Context ctx(GetParam());
  for (std::size_t n : {std::size_t(0), std::size_t(1), 3 * B + 5}) {
    stores_into_result<half>(ctx, n);
    stores_into_result<bfloat16>(ctx, n);
  }
  Operand<half> x{random_vector<half>(64), nullptr};
  const Span<const half> xs = x.span(ctx, 0, 64);
  expect_error(Errc::size_mismatch, [&] { ew::sum<half>(ctx, xs, Span<float>(nullptr, 2)); }, "ew::sum: result");
  expect_error(Errc::null_pointer, [&] { ew::asum<half>(ctx, xs, Span<float>(nullptr, 1)); }, "ew::asum: result");
  // The float result may not overlap the 16-bit operand, except at its first element.
  float* inside = reinterpret_cast<float*>(const_cast<half*>(xs.data) + 2);
  expect_error(Errc::overlap, [&] { ew::norm2<half>(ctx, xs, Span<float>(inside, 1, xs.space)); }, "result");
}

INSTANTIATE_TEST_SUITE_P(scalar, Reduce16, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, Reduce16, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, Reduce16, testing::Values(Backend::kokkos));
INSTANTIATE_TEST_SUITE_P(cuda, Reduce16, testing::Values(Backend::cuda));

}  // namespace
}  // namespace ew::test

// 16-bit data in expressions (docs/expressions.md, "16-bit data"): the typing rules, where
// values are rounded to 16 bits and where not, params, casts from f64 rounded once, mixed
// storage types in one kernel; and on every backend, every f16 and bf16 bit pattern
// widened and stored again, and f32/f64 values at every rounding edge narrowed, bit for
// bit (NaN payloads included) against the library's own conversions (ew/float16.hpp).
#include <cmath>
#include <cstring>
#include <memory>

#include "expr_support.hpp"

namespace ew::test {
namespace {

const Expr h0 = input<half>(0), h1 = input<half>(1), b0 = input<bfloat16>(0), b1 = input<bfloat16>(1);

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

TEST(ExprFloat16, PromotionFollowsTorch) {
  EXPECT_EQ((h0 + h1).dtype(), DType::f16);
  EXPECT_EQ((b0 * b1).dtype(), DType::bf16);
  EXPECT_EQ((h0 + b1).dtype(), DType::f32) << "f16 with bf16 meet in f32, which holds both";
  EXPECT_EQ((h0 + input<float>(1)).dtype(), DType::f32);
  EXPECT_EQ((b0 - input<double>(1)).dtype(), DType::f64);
  EXPECT_EQ(ew::fma(h0, h1, h0).dtype(), DType::f16);
  EXPECT_EQ(ew::fma(h0, h1, input<float>(2)).dtype(), DType::f32);
  EXPECT_EQ((h0 < h1).dtype(), DType::f16);
  EXPECT_EQ(ew::select(input<double>(2), b0, b1).dtype(), DType::bf16);
  EXPECT_EQ(ew::sigmoid(b0).dtype(), DType::bf16);
  EXPECT_EQ((h0 * 0.1).dtype(), DType::f16);
  EXPECT_EQ((2 * b0).dtype(), DType::bf16);
  EXPECT_EQ(cast<half>(input<double>(1)).dtype(), DType::f16);
  EXPECT_EQ(cast<float>(h0).dtype(), DType::f32);
  EXPECT_EQ(param<bfloat16>(0).dtype(), DType::bf16);
}

// A plain number meeting 16-bit data is rounded to f32, the type it computes in, not to
// 16 bits; so is an expression of numbers alone.
TEST(ExprFloat16, NumbersMeetSixteenBitDataAsF32) {
  const std::string text = compile({h0 * 0.1}).str();
  char want[64];
  std::snprintf(want, sizeof want, "const.f16 %a", static_cast<double>(0.1f));
  EXPECT_NE(text.find(want), std::string::npos) << text;
  const std::string root2 = compile({b0 + ew::sqrt(Expr(2.0))}).str();
  std::snprintf(want, sizeof want, "const.bf16 %a", static_cast<double>(static_cast<float>(std::sqrt(2.0))));
  EXPECT_NE(root2.find(want), std::string::npos) << root2;
  EXPECT_EQ(root2.find("sqrt"), std::string::npos) << "an expression of numbers is its value: " << root2;
  // A cast number is rounded to the 16-bit type itself, once, from double.
  std::snprintf(want, sizeof want, "const.f16 %a", static_cast<double>(static_cast<float>(half(0.1))));
  EXPECT_NE(compile({cast<half>(Expr(0.1)) + h0}).str().find(want), std::string::npos);
}

// A select of numbers on a param's condition, meeting 16-bit data: the kernel still reads the
// param (it was once folded into one number, and the kernel read no param).
TEST(ExprFloat16, NumbersSelectedByAParamKeepIt) {
  const Kernel k = compile({ew::select(param<float>(0) > 0, 1, 2) * h0});
  EXPECT_EQ(k.params(), 1) << k.str();
  Context ctx(Backend::scalar);
  const std::vector<half> x = random_vector<half>(64);
  std::vector<half> out(64);
  for (double p : {1.0, -1.0}) {
    k(ctx, {x}, {out}, {p});
    for (std::size_t i = 0; i < x.size(); ++i)
      ASSERT_EQ(out[i].bits, half((p > 0 ? 1.0f : 2.0f) * static_cast<float>(x[i])).bits) << i << " param " << p;
  }
}

// A condition typed by casts of numbers alone is typed too: `a + 1 == a` holds in f32 at
// 2^24 (not in f64), and the select keeps it.
TEST(ExprFloat16, NumbersSelectedByATypedNumberConditionKeepIt) {
  const Expr a = cast<float>(Expr(16777216.0));
  const Expr f32_equal = (a + cast<float>(Expr(1.0))) == a;
  Context ctx(Backend::scalar);
  const std::vector<half> x = random_vector<half>(64);
  std::vector<half> out(64);
  compile({ew::select(f32_equal, 1, 2) * h0})(ctx, {x}, {out});
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i].bits, x[i].bits) << i;
}

// A number graph that shares its nodes (e = e + e, 40 times: 2^40 paths) is valued once a
// node when it meets 16-bit data.
TEST(ExprFloat16, SharedNumberGraphsAreValuedOnceANode) {
  Expr e(1.0);
  for (int k = 0; k < 40; ++k) e = e + e;
  const std::string text = compile({e * h0}).str();
  EXPECT_NE(text.find("const.f16 0x1p+40"), std::string::npos) << text;
}

// The values: every node computes in f32 as float data does; the store rounds once; a
// cast to a 16-bit type rounds where it is written; cast<float> of a 16-bit node is its
// f32 value, not rounded to 16 bits.
TEST(ExprFloat16, RoundedOnlyAtTheStoreAndByCasts) {
  Context ctx(Backend::scalar);
  const std::size_t n = 1000;
  const std::vector<half> x = random_vector<half>(n), y = random_vector<half>(n), z = random_vector<half>(n);
  std::vector<half> chain(n), rounded_twice(n);
  std::vector<float> wide(n), cast_then_wide(n);
  compile({h0 * h1 + input<half>(2), cast<half>(h0 * h1) + input<half>(2), cast<float>(h0 * h1),
           cast<float>(cast<half>(h0 * h1))})(ctx, {x, y, z}, {chain, rounded_twice, wide, cast_then_wide});
  int differ = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float fx = static_cast<float>(x[i]), fy = static_cast<float>(y[i]), fz = static_cast<float>(z[i]);
    const float product = fx * fy;
    ASSERT_EQ(chain[i].bits, half(product + fz).bits) << i;
    ASSERT_EQ(rounded_twice[i].bits, half(static_cast<float>(half(product)) + fz).bits) << i;
    ASSERT_EQ(bits_of(wide[i]), bits_of(product)) << i;
    ASSERT_EQ(bits_of(cast_then_wide[i]), bits_of(static_cast<float>(half(product)))) << i;
    differ += chain[i].bits != rounded_twice[i].bits;
  }
  EXPECT_GT(differ, 10) << "the data should tell one rounding from two";
}

// Params of a 16-bit dtype: the double passed is rounded to it once, at the call.
TEST(ExprFloat16, SixteenBitParamsAreRoundedOnce) {
  Context ctx(Backend::scalar);
  const std::vector<bfloat16> x = random_vector<bfloat16>(64);
  std::vector<bfloat16> out(64);
  const double p = 1 + 0x1p-8 + 0x1p-30;  // above a bf16 tie by less than f32 resolves
  compile({b0 * param<bfloat16>(0)})(ctx, {x}, {out}, {p});
  const float rounded = static_cast<float>(bfloat16(p));
  ASSERT_EQ(rounded, 1 + 0x1p-7f) << "from double straight: up, not to even through f32";
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_EQ(out[i].bits, bfloat16(static_cast<float>(x[i]) * rounded).bits) << i;
}

// cast of an f64 value to a 16-bit type rounds once, from the double.
TEST(ExprFloat16, CastFromF64RoundsOnce) {
  Context ctx(Backend::scalar);
  const std::vector<double> v = {1 + 0x1p-11 + 0x1p-30, 1 + 0x1p-8 + 0x1p-30, -(1 + 0x1p-11 + 0x1p-40)};
  std::vector<half> h(v.size());
  std::vector<bfloat16> b(v.size());
  const Expr d = input<double>(0);
  compile({cast<half>(d), cast<bfloat16>(d)})(ctx, {v}, {h, b});
  EXPECT_EQ(h[0].bits, 0x3c01) << "through f32 it would be 0x3c00";
  EXPECT_EQ(b[1].bits, 0x3f81) << "through f32 it would be 0x3f80";
  EXPECT_EQ(h[2].bits, 0xbc01);
}

// One kernel reads bf16 and f16 and writes f32, bf16 and f64.
TEST(ExprFloat16, MixedStorageTypesInOneKernel) {
  Context ctx(Backend::scalar);
  const std::size_t n = 257;
  const std::vector<bfloat16> a = random_vector<bfloat16>(n);
  const std::vector<half> c = random_vector<half>(n);
  std::vector<float> f(n);
  std::vector<bfloat16> r(n);
  std::vector<double> d(n);
  const Expr a0 = input<bfloat16>(0), c1 = input<half>(1);
  compile({cast<float>(a0) * 2.0f + c1, ew::max(a0, 0), cast<double>(c1) / 3.0})(ctx, {a, c}, {f, r, d});
  for (std::size_t i = 0; i < n; ++i) {
    const float fa = static_cast<float>(a[i]), fc = static_cast<float>(c[i]);
    ASSERT_EQ(bits_of(f[i]), bits_of(fa * 2.0f + fc)) << i;
    ASSERT_EQ(r[i].bits, bfloat16(fa < 0 ? 0.0f : fa).bits) << i;
    ASSERT_EQ(d[i], static_cast<double>(fc) / 3.0) << i;
  }
}

// ---- every backend: the conversions at the loads, stores and casts, bit for bit.

// The outputs of `k` on backend b, its operands in the backend's own memory (device memory
// for cuda and kokkos on a GPU), the outputs poisoned before the call.
std::vector<HostArray> run_on(Backend b, const Kernel& k, const CallData& c) {
  Context ctx(b);
  std::vector<std::unique_ptr<DeviceArray>> in_dev, out_dev;
  std::vector<InputArray> in;
  for (const HostArray& a : c.inputs) {
    in_dev.push_back(std::make_unique<DeviceArray>(ctx, a.dtype, c.n));
    in_dev.back()->upload(a);
    in.push_back(in_dev.back()->input(0, c.n));
  }
  std::vector<OutputArray> out;
  for (int j = 0; j < k.outputs(); ++j) {
    HostArray poison(k.output_dtype(j), c.n);
    for (std::size_t i = 0; i < c.n; ++i) poison.set_poison(i);
    out_dev.push_back(std::make_unique<DeviceArray>(ctx, poison.dtype, c.n));
    out_dev.back()->upload(poison);
    out.push_back(out_dev.back()->output(0, c.n));
  }
  k.run(ctx, in.data(), in.size(), out.data(), out.size(), c.params.data(), c.params.size());
  ctx.synchronize();
  std::vector<HostArray> got;
  for (const auto& d : out_dev) got.push_back(d->download());
  return got;
}

class ExprFloat16Backends : public testing::TestWithParam<Backend> {};

// All 65,536 patterns of each 16-bit type (NaN payloads, subnormals, infinities) read,
// kept (x), stored again (copy, min with itself) and widened to f32 and f64: exactly the
// library's conversions, NaNs included (made quiet, sign and payload kept).
TEST_P(ExprFloat16Backends, EveryPatternWidensAndStoresExactly) {
  EW_EXPR_SKIP_IF_UNUSABLE(GetParam());
  for (DType t : storage16_dtypes) {
    CallData c;
    c.n = 65536;
    c.inputs.emplace_back(t, c.n);
    for (std::size_t i = 0; i < c.n; ++i) c.inputs[0].h[i] = static_cast<std::uint16_t>(i);
    const Expr x = input(0, t);
    const Kernel k = compile({x, ew::min(x, x), cast<float>(x), cast<double>(x)});
    const std::vector<HostArray> got = run_on(GetParam(), k, c);
    for (std::size_t i = 0; i < c.n; ++i) {
      const std::uint16_t in = static_cast<std::uint16_t>(i);
      const float wide = t == DType::f16 ? static_cast<float>(half::from_bits(in)) : static_cast<float>(bfloat16::from_bits(in));
      const std::uint16_t again = t == DType::f16 ? half(wide).bits : bfloat16(wide).bits;
      const double wide64 = wide;
      ASSERT_EQ(got[0].h[i], again) << to_string(t) << " pattern " << std::hex << in << " on " << to_string(GetParam());
      ASSERT_EQ(got[1].h[i], again) << to_string(t) << " min, pattern " << std::hex << in;
      ASSERT_EQ(bits_of(got[2].f[i]), bits_of(wide)) << to_string(t) << " widened, pattern " << std::hex << in;
      ASSERT_EQ(std::memcmp(&got[3].d[i], &wide64, 8), 0) << to_string(t) << " to f64, pattern " << std::hex << in;
    }
  }
}

// f32 and f64 values at every rounding edge of both 16-bit types (each pattern's value,
// the midpoints to its neighbour and one unit either side of them, overflow, subnormals,
// NaN payloads) rounded by a store and by a cast, exactly as the library's conversions.
TEST_P(ExprFloat16Backends, RoundingEdgesNarrowExactly) {
  EW_EXPR_SKIP_IF_UNUSABLE(GetParam());
  for (DType t : storage16_dtypes) {
    std::vector<double> values;
    const auto widen = [&](std::uint32_t bits) {
      const auto b = static_cast<std::uint16_t>(bits);
      return t == DType::f16 ? static_cast<double>(half::from_bits(b)) : static_cast<double>(bfloat16::from_bits(b));
    };
    for (std::uint32_t bits = 0; bits < 0x10000; bits += (bits & 0x7fff) < 0x7c00 || t == DType::bf16 ? 7 : 1) {
      const double v = widen(bits), next = widen(bits + 1);
      values.push_back(v);
      if (!std::isfinite(v) || !std::isfinite(next) || std::signbit(v) != std::signbit(next)) continue;
      const double mid = (v + next) / 2;  // exact in double
      values.push_back(mid);
      values.push_back(std::nextafter(static_cast<float>(mid), 0.0f));
      values.push_back(std::nextafter(static_cast<float>(mid), 1e30f * (mid > 0 ? 1 : -1)));
      values.push_back(std::nextafter(mid, 0.0));
      values.push_back(std::nextafter(mid, mid * 2));
    }
    for (double v : {65504.0, 65519.99, 65520.0, 1e9, 0x1p-25, 0x1p-26, 3 * 0x1p-26, 1e-40, 3.4e38, 3.4028235e38})
      for (double s : {1.0, -1.0}) values.push_back(s * v);
    CallData c;
    c.n = values.size();
    c.inputs.emplace_back(DType::f32, c.n);
    c.inputs.emplace_back(DType::f64, c.n);
    for (std::size_t i = 0; i < c.n; ++i) c.inputs[0].set(i, values[i]), c.inputs[1].set(i, values[i]);
    // NaN payloads in f32 (quiet and signaling, both signs).
    for (std::uint32_t nan : {0x7f800001u, 0x7fa00000u, 0xffc01234u, 0x7fffffffu, 0xff812345u})
      std::memcpy(&c.inputs[0].f[nan % c.n], &nan, 4);
    const Expr f = input<float>(0), d = input<double>(1);
    const Kernel k = compile({cast(f, t), cast<float>(cast(f, t)), cast(d, t), cast<float>(cast(d, t))});
    const std::vector<HostArray> got = run_on(GetParam(), k, c);
    for (std::size_t i = 0; i < c.n; ++i) {
      const float x = c.inputs[0].f[i];
      const double y = c.inputs[1].d[i];
      const std::uint16_t from_f = t == DType::f16 ? half(x).bits : bfloat16(x).bits;
      const std::uint16_t from_d = t == DType::f16 ? half(y).bits : bfloat16(y).bits;
      const auto back = [&](std::uint16_t b) {
        return bits_of(t == DType::f16 ? static_cast<float>(half::from_bits(b)) : static_cast<float>(bfloat16::from_bits(b)));
      };
      ASSERT_EQ(got[0].h[i], from_f) << to_string(t) << " from f32 " << std::hexfloat << x << " on " << to_string(GetParam());
      ASSERT_EQ(bits_of(got[1].f[i]), back(from_f)) << to_string(t) << " cast from f32 " << std::hexfloat << x;
      ASSERT_EQ(got[2].h[i], from_d) << to_string(t) << " from f64 " << std::hexfloat << y;
      ASSERT_EQ(bits_of(got[3].f[i]), back(from_d)) << to_string(t) << " cast from f64 " << std::hexfloat << y;
    }
  }
}

// A select of numbers on a condition that reads an input, meeting 16-bit data: the select
// keeps its condition, its numbers rounded to f32 and its arithmetic in f32, as the 16-bit
// node it joins. (It was once folded into one number, as an expression of numbers alone is:
// its input read as 0 and the kernel no longer read it.)
TEST_P(ExprFloat16Backends, NumbersSelectedByATypedConditionKeepIt) {
  EW_EXPR_SKIP_IF_UNUSABLE(GetParam());
  for (DType t : storage16_dtypes) {
    CallData c;
    c.n = 1037;
    c.inputs.push_back(random_array(rng(), DType::f32, c.n));
    c.inputs.push_back(random_array(rng(), t, c.n));
    const Expr x = input<float>(0), h = input(1, t);
    const Kernel k = compile({ew::select(x > 0, 1, 2.5) * h, (ew::select(x > 0, 0.1, -3) + 1) * h});
    ASSERT_NE(k.str().find("input.f32 0"), std::string::npos) << k.str();
    const std::vector<HostArray> got = run_on(GetParam(), k, c);
    int positive = 0;
    for (std::size_t i = 0; i < c.n; ++i) {
      const float xi = c.inputs[0].f[i], hi = static_cast<float>(c.inputs[1].get(i));
      const bool p = xi > 0;
      positive += p;
      const float first = (p ? 1.0f : 2.5f) * hi, second = ((p ? 0.1f : -3.0f) + 1.0f) * hi;
      HostArray want(t, 2);
      want.set(0, first), want.set(1, second);
      ASSERT_EQ(got[0].h[i], want.h[0]) << to_string(t) << " x " << xi << " h " << hi << " on " << to_string(GetParam());
      ASSERT_EQ(got[1].h[i], want.h[1]) << to_string(t) << " x " << xi << " h " << hi << " on " << to_string(GetParam());
    }
    EXPECT_GT(positive, 100);
    EXPECT_LT(positive, static_cast<int>(c.n) - 100) << "both branches taken";
  }
}

INSTANTIATE_TEST_SUITE_P(scalar, ExprFloat16Backends, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, ExprFloat16Backends, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, ExprFloat16Backends, testing::Values(Backend::kokkos));
INSTANTIATE_TEST_SUITE_P(cuda, ExprFloat16Backends, testing::Values(Backend::cuda));

}  // namespace
}  // namespace ew::test

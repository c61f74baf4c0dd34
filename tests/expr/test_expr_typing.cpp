// The typing rules of ew/expr.hpp's header comment, and the limits that keep a call
// from crashing: each rule checked through dtype() and through the values computed.
#include <cmath>
#include <cstdint>
#include <cstring>

#include "expr_support.hpp"

namespace ew::test {
namespace {

const Expr x32 = input<float>(0), y64 = input<double>(1);

TEST(ExprTyping, NodesComputeInTheWiderDtype) {
  EXPECT_EQ((x32 + y64).dtype(), DType::f64);
  EXPECT_EQ((x32 * x32).dtype(), DType::f32);
  EXPECT_EQ(ew::fma(x32, x32, y64).dtype(), DType::f64);
  EXPECT_EQ(ew::min(y64, x32).dtype(), DType::f64);
  // Comparisons give 1 or 0 in their operands' dtype; select takes its branches' dtype.
  EXPECT_EQ((x32 < y64).dtype(), DType::f64);
  EXPECT_EQ((x32 != x32).dtype(), DType::f32);
  EXPECT_EQ(ew::select(y64 > 0, x32, x32 * 2).dtype(), DType::f32);
  EXPECT_EQ(ew::select(x32, x32, y64).dtype(), DType::f64);
  EXPECT_EQ(cast<float>(y64).dtype(), DType::f32);
  EXPECT_EQ(cast<double>(x32).dtype(), DType::f64);
}

TEST(ExprTyping, PlainNumbersTakeTheDtypeTheyMeet) {
  EXPECT_EQ(Expr(2).dtype(), DType::f64);  // alone: f64
  EXPECT_EQ((x32 * 0.1).dtype(), DType::f32);
  EXPECT_EQ((0.1 * y64).dtype(), DType::f64);
  EXPECT_EQ((x32 + 1.0f).dtype(), DType::f32);
  EXPECT_EQ(compile({Expr(2.5)}).output_dtype(0), DType::f64);
  // 0.1 rounded to f32 once (to nearest even), then one f32 multiplication.
  Context ctx(Backend::scalar);
  std::vector<float> x = random_vector<float>(100), out(100);
  compile({x32 * 0.1})(ctx, {x}, {out});
  for (std::size_t i = 0; i < x.size(); ++i) ASSERT_TRUE(same_bits(out[i], x[i] * 0.1f)) << x[i];
  // In f64 the number keeps all its bits.
  std::vector<double> y = random_vector<double>(100), out64(100);
  std::vector<float> unused;
  compile({0.1 * y64})(ctx, {unused, y}, {out64});
  for (std::size_t i = 0; i < y.size(); ++i) ASSERT_TRUE(same_bits(out64[i], 0.1 * y[i])) << y[i];
}

// cast<T> converts, in both directions alike: a cast number is a number of that dtype,
// which widens what it meets (as cast<float>(number) + f64 input computes in f64).
TEST(ExprTyping, CastNumbersAreTyped) {
  EXPECT_EQ((cast<float>(Expr(0.1)) + y64).dtype(), DType::f64);
  EXPECT_EQ((cast<double>(Expr(0.1)) + x32).dtype(), DType::f64)
      << "cast<double> of a plain number stays a plain number and takes f32 from x32; cast<float> of one is typed";
}

TEST(ExprTyping, CanonicalTextMergesCommonSubexpressions) {
  const Expr a = ew::exp(x32) * 2;
  const Expr b = ew::exp(input<float>(0)) * 2;  // the same graph, built again
  const Kernel k = compile({a + b, b});
  std::size_t exps = 0;
  const std::string text = k.str();
  for (std::size_t at = text.find("exp."); at != std::string::npos; at = text.find("exp.", at + 1)) ++exps;
  EXPECT_EQ(exps, 1u) << text;
  EXPECT_EQ(compile({a}).str(), compile({b}).str());
  EXPECT_EQ(a.str(), compile({a}).str());
}

// Constants that differ only in a NaN's payload are different programs (their
// canonical text is the cuda backend's cache key): they store different bits.
TEST(ExprTyping, NanConstantsOfOtherPayloadsAreOtherPrograms) {
  double a, b;
  const std::uint64_t bits_a = 0x7ff8000000000001ull, bits_b = 0x7ff8000000000123ull;
  std::memcpy(&a, &bits_a, 8);
  std::memcpy(&b, &bits_b, 8);
  const Expr x = input<double>(0);
  EXPECT_NE(compile({ew::max(x, Expr(a))}).str(), compile({ew::max(x, Expr(b))}).str());
}

TEST(ExprCalls, ZeroLengthIsANoOp) {
  for (Backend b : all_backends) {
    if (!expr_skip_reason(b).empty()) continue;
    Context ctx(b);
    const Kernel k = compile({x32 + y64, x32});
    InputArray none32, none64;
    none64.dtype = DType::f64;
    OutputArray out64, out32;
    out64.dtype = DType::f64;
    std::initializer_list<InputArray> in = {none32, none64};
    std::initializer_list<OutputArray> out = {out64, out32};
    EXPECT_NO_THROW(k(ctx, in, out)) << to_string(b);  // null with n = 0: nothing to read or write
  }
}

TEST(ExprCalls, NoInputs) {
  Context ctx(Backend::scalar);
  std::vector<double> out(33, poison<double>());
  compile({Expr(2.5)})(ctx, {}, {out});
  for (double v : out) ASSERT_EQ(v, 2.5);
  std::vector<float> p(17, poison<float>());
  compile({param<float>(3) * 2})(ctx, {}, {p}, {0, 0, 0, 0.1});
  for (float v : p) ASSERT_TRUE(same_bits(v, 0.1f * 2));
}

// An expression far deeper than the node limit could ever compile: an ew::Error (when
// built or compiled), never a crash on the stack of a recursive walk.
TEST(ExprLimits, DeepExpressionIsAnErrorNotACrash) {
  try {
    Expr e = x32;
    for (int i = 0; i < 100000; ++i) e = e + 1;
    (void)compile({e});
    ADD_FAILURE() << "a 100000-deep expression compiled";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
    EXPECT_NE(std::string(e.what()).find("1024"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace ew::test

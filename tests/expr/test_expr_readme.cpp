// The README's expression example, compiled and run: the code between the markers
// below is the README's code block (ExampleIsTheReadmeCode compares the two), checked
// against values computed independently in double with std::exp (within a few ulp)
// and against the scalar backend (bit for bit), on its data and on random data.
#include <cmath>
#include <cstdint>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "test_support.hpp"

namespace ew::test {
namespace {

// Distance in units in the last place between two finite floats of one sign or of
// both (the ordered integer images of their bits).
std::int64_t ulps(float a, float b) {
  auto ordered = [](float v) {
    std::int32_t i;
    std::memcpy(&i, &v, 4);
    return i < 0 ? static_cast<std::int64_t>(INT32_MIN) - i : static_cast<std::int64_t>(i);
  };
  return std::llabs(ordered(a) - ordered(b));
}

// x * sigmoid(x) computed in double, then rounded once.
float silu_in_double(float x) {
  const double xd = x;
  return static_cast<float>(xd / (1.0 + std::exp(-xd)));
}

// sigmoid within 4 ulp (the library's bound), which can be 8 ulp of the product where the
// two lie at opposite ends of their binades, and the product's own rounding.
// Below x = -87.3 sigmoid(x) itself is subnormal in f32: it holds an absolute error of half
// of 2^-149, which the product with x multiplies by |x|.
std::int64_t silu_ulps(float x) {
  const double sigmoid = 1.0 / (1.0 + std::exp(-static_cast<double>(x)));
  return 9 + (sigmoid < std::numeric_limits<float>::min() ? static_cast<std::int64_t>(std::ceil(std::fabs(x))) : 0);
}

// Checks silu and axpy (s = 3) of x, y computed on `ctx` against double and the scalar backend.
void check(Context& ctx, const Kernel& k, const std::vector<float>& x, const std::vector<float>& y,
           const std::vector<float>& silu, const std::vector<float>& axpy) {
  const std::size_t n = x.size();
  std::int64_t worst = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const float want = silu_in_double(x[i]);
    const std::int64_t d = ulps(silu[i], want);
    worst = std::max(worst, d);
    if (d > silu_ulps(x[i])) {
      ADD_FAILURE() << ctx.backend_name() << ": silu(" << x[i] << ") = " << silu[i] << ", double gives " << want << " ("
                    << d << " ulp)";
      break;
    }
    if (!same_bits(axpy[i], std::fma(3.0f, x[i], y[i]))) {
      ADD_FAILURE() << ctx.backend_name() << ": fma(3, " << x[i] << ", " << y[i] << ") = " << axpy[i];
      break;
    }
  }
  std::printf("%s: x * sigmoid(x) within %lld ulp of double over %zu elements\n", ctx.backend_name(),
              static_cast<long long>(worst), n);
  Context scalar(Backend::scalar);
  std::vector<float> silu_ref(n), axpy_ref(n);
  k(scalar, {x, y}, {silu_ref, axpy_ref}, {3.0});
  EXPECT_EQ(first_mismatch(silu, silu_ref), -1) << ctx.backend_name() << " silu differs from the scalar backend";
  EXPECT_EQ(first_mismatch(axpy, axpy_ref), -1) << ctx.backend_name() << " fma differs from the scalar backend";
}

TEST(ExprReadme, ExampleRunsAndIsRight) {
  try {
    // README example begin (its #include is a no-op here: test_support.hpp included ew.hpp)
    #include <ew/ew.hpp>

    ew::Context ctx;
    const std::size_t n = 1 << 20;
    std::vector<float> x(n, 0.5f), y(n, 2.0f), silu(n), axpy(n);

    auto X = ew::input<float>(0), Y = ew::input<float>(1);   // input arrays 0 and 1
    auto s = ew::param<float>(0);                            // scalar parameter 0
    ew::Kernel k = ew::compile({X * ew::sigmoid(X),          // output 0
                                ew::fma(s, X, Y)});          // output 1, same pass
    k(ctx, {x, y}, {silu, axpy}, {3.0});                     // inputs, outputs, params
    // README example end
    ctx.synchronize();
    for (std::size_t i = 0; i < n; ++i)
      ASSERT_TRUE(x[i] == 0.5f && y[i] == 2.0f) << "an input changed at " << i;
    ASSERT_EQ(axpy[0], 3.5f);
    check(ctx, k, x, y, silu, axpy);

    // The same kernel on random data, including where sigmoid saturates.
    std::vector<float> rx = random_vector<float>(n), ry = random_vector<float>(n);
    for (std::size_t i = 0; i < n; i += 7) rx[i] = std::ldexp(rx[i], 5);  // out to +-2^14
    std::vector<float> rsilu(n, poison<float>()), raxpy(n, poison<float>());
    k(ctx, {rx, ry}, {rsilu, raxpy}, {3.0});
    ctx.synchronize();
    check(ctx, k, rx, ry, rsilu, raxpy);
  } catch (const Error& e) {
    // The default backend may be a GPU one that does not evaluate expressions yet.
    if (e.code() == Errc::backend_unavailable && Context().backend() == Backend::cuda) GTEST_SKIP() << e.what();
    throw;
  }
}

std::string slurp(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

// The README's code block (after the heading of the expressions section) is the code
// between the markers above, line for line once the indentation is taken off.
TEST(ExprReadme, ExampleIsTheReadmeCode) {
  const std::string readme = slurp(EW_SOURCE_DIR "/README.md"), test = slurp(__FILE__);
  ASSERT_FALSE(readme.empty()) << EW_SOURCE_DIR "/README.md";
  ASSERT_FALSE(test.empty()) << __FILE__;
  const std::size_t section = readme.find("## Your own formulas, fused");
  ASSERT_NE(section, std::string::npos) << "README.md has no section \"## Your own formulas, fused\"";
  const std::size_t open = readme.find("```cpp\n", section);
  ASSERT_NE(open, std::string::npos);
  const std::size_t begin = open + 7, end = readme.find("```", begin);
  const std::string block = readme.substr(begin, end - begin);

  const std::string begin_marker = "// README example begin", end_marker = "    // README example end";
  const std::size_t from = test.find('\n', test.find(begin_marker)) + 1, to = test.find(end_marker);
  std::istringstream lines(test.substr(from, to - from));
  std::string line, code;
  while (std::getline(lines, line)) code += (line.size() >= 4 ? line.substr(4) : line) + "\n";
  EXPECT_EQ(code, block) << "README.md's expression example and test_expr_readme.cpp differ: update the test";
}

}  // namespace
}  // namespace ew::test

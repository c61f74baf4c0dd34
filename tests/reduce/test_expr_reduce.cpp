// Reductions over an expression (ew/expr_reduce.hpp) on every backend: ew::sum(ctx, kernel,
// inputs) must give the bits of evaluating the kernel into an array of its output dtype and
// calling ew::sum on that array, for fixed and random expressions (mixed f32/f64 inputs,
// outputs of every dtype), sizes around the plan's blocks and the chunks, offsets; the same
// bits on every backend; bad input named. cuda refuses (Errc::unsupported).
#include <random>
#include <string>

#include "reduce_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t chunk = 32 * B;  // expr_reduce.cpp's chunk, repeated on purpose
constexpr std::size_t sizes[] = {1, 31, B - 1, B + 1, chunk - 1, chunk, chunk + 3, 3 * chunk + 5000};
constexpr std::size_t max_n = 3 * chunk + 5000;

// Inputs 0..2: f32, f64, f32, random with cancellation, two elements longer than any size
// (offsets 0..2).
struct Inputs {
  std::vector<float> a = cancelling_vector<float>(max_n + 2), c = random_vector<float>(max_n + 2);
  std::vector<double> b = cancelling_vector<double>(max_n + 2);
  std::vector<InputArray> arrays(std::size_t off, std::size_t n) const {
    return {Span<const float>(a.data() + off, n), Span<const double>(b.data() + off, n),
            Span<const float>(c.data() + off, n)};
  }
};

// A random expression over inputs 0..2 (dtypes as Inputs) and param 0 (f32).
Expr random_expr(std::mt19937_64& g, int depth) {
  std::uniform_int_distribution<int> pick(0, depth <= 0 ? 3 : 14);
  const int k = pick(g);
  switch (k) {
    case 0: return input<float>(0);
    case 1: return input<double>(1);
    case 2: return input<float>(2);
    case 3: return param<float>(0) * input<float>(2);
    case 4: return random_expr(g, depth - 1) + random_expr(g, depth - 1);
    case 5: return random_expr(g, depth - 1) - random_expr(g, depth - 1);
    case 6: return random_expr(g, depth - 1) * random_expr(g, depth - 1);
    case 7: return random_expr(g, depth - 1) / (abs(random_expr(g, depth - 1)) + 0.5);
    case 8: return min(random_expr(g, depth - 1), random_expr(g, depth - 1));
    case 9: return max(random_expr(g, depth - 1), 0.25);
    case 10: return sqrt(abs(random_expr(g, depth - 1)));
    case 11: return fma(random_expr(g, depth - 1), random_expr(g, depth - 1), random_expr(g, depth - 1));
    case 12: return select(random_expr(g, depth - 1) < random_expr(g, depth - 1), random_expr(g, depth - 1), -1.5);
    case 13: return cast<float>(random_expr(g, depth - 1));
    default: return tanh(random_expr(g, depth - 1));
  }
}

// ew::sum or ew::asum of an evaluated array of dtype d, as a double (exact).
double reduce_array(Context& ctx, bool absolute, DType d, const void* data, std::size_t n) {
  const auto run = [&](auto tag) -> double {
    using T = decltype(tag);
    const Span<const T> x(static_cast<const T*>(data), n);
    return static_cast<double>(absolute ? ew::asum<T>(ctx, x) : ew::sum<T>(ctx, x));
  };
  switch (d) {
    case DType::f32: return run(0.0f);
    case DType::f64: return run(0.0);
    case DType::f16: return run(half{});
    default: return run(bfloat16{});
  }
}

// The unfused form: the kernel evaluated into an array, the array reduced.
double unfused(Context& ctx, bool absolute, const Kernel& k, const std::vector<InputArray>& in, double param) {
  const DType d = k.output_dtype(0);
  const std::size_t n = in[0].size;
  std::vector<unsigned char> bytes(n * size_of(d) + 64);
  void* aligned = bytes.data() + (64 - reinterpret_cast<std::uintptr_t>(bytes.data()) % 64) % 64;
  OutputArray out;
  out.data = aligned, out.size = n, out.dtype = d;
  const double params[1] = {param};
  k.run(ctx, in.data(), in.size(), &out, 1, params, static_cast<std::size_t>(k.params()));
  return reduce_array(ctx, absolute, d, aligned, n);
}

double fused(Context& ctx, bool absolute, const Kernel& k, const std::vector<InputArray>& in, double param) {
  const double params[1] = {param};
  const std::size_t pc = static_cast<std::size_t>(k.params());
  return absolute ? ew::asum(ctx, k, in.data(), in.size(), params, pc) : ew::sum(ctx, k, in.data(), in.size(), params, pc);
}

std::string bits_of(double v) {
  char text[64];
  std::snprintf(text, sizeof text, "%.17g (%llx)", v, static_cast<unsigned long long>(bits(v)));
  return text;
}

class ExprReduce : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(GetParam());
    if (GetParam() == Backend::cuda) GTEST_SKIP() << "cuda refuses expression reductions (CudaRefuses below)";
  }

  // Every size and offset: fused == unfused on this backend, and == scalar's fused.
  void check(const Kernel& k, const Inputs& data, const std::string& what) {
    Context ctx(GetParam());
    Context ref(Backend::scalar);
    for (std::size_t n : sizes)
      for (std::size_t off : {std::size_t(0), std::size_t(1)})
        for (bool absolute : {false, true}) {
          std::vector<InputArray> in = data.arrays(off, n);
          in.resize(static_cast<std::size_t>(k.inputs()));  // the slots up to the last one read
          const double want = unfused(ctx, absolute, k, in, 0.75);
          const double got = fused(ctx, absolute, k, in, 0.75);
          const double scalar = fused(ref, absolute, k, in, 0.75);
          ASSERT_TRUE(same_bits(got, want) && same_bits(got, scalar))
              << (absolute ? "asum" : "sum") << " of " << what << " n=" << n << " offset " << off << ": fused "
              << bits_of(got) << ", evaluated then reduced " << bits_of(want) << ", scalar fused " << bits_of(scalar);
        }
  }
};

TEST_P(ExprReduce, SumOfSquaredDifferencesIsTheSumOfTheEvaluatedArray) {
  const Inputs data;
  const Expr a = input<float>(0), b = input<double>(1), c = input<float>(2);
  check(compile({(a - c) * (a - c)}), data, "(a - c)^2 f32");
  check(compile({(a - b) * (a - b)}), data, "(a - b)^2 f64");
  check(compile({cast<half>(a * c)}), data, "f16(a * c)");
  check(compile({cast<bfloat16>(b - a)}), data, "bf16(b - a)");
}

TEST_P(ExprReduce, RandomExpressions) {
  const Inputs data;
  std::mt19937_64 g(rng()());
  for (int e = 0; e < 24; ++e) {
    Expr x = random_expr(g, 4);
    if (e % 6 == 4) x = cast<half>(x);
    if (e % 6 == 5) x = cast<bfloat16>(x);
    const Kernel k = compile({x});
    check(k, data, k.str());
    if (HasFailure()) return;
  }
}

TEST_P(ExprReduce, SpecialValuesAndEmpty) {
  Context ctx(GetParam());
  const Expr a = input<float>(0);
  const Kernel k = compile({a * a});
  std::vector<float> x = random_vector<float>(3 * B + 5);
  x[B + 3] = std::numeric_limits<float>::infinity();
  const std::vector<InputArray> in{Span<const float>(x)};
  EXPECT_EQ(fused(ctx, false, k, in, 0), std::numeric_limits<double>::infinity());
  x[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(fused(ctx, false, k, in, 0)));
  const std::vector<InputArray> none{Span<const float>()};
  EXPECT_TRUE(same_bits(fused(ctx, false, k, none, 0), 0.0));
}

TEST_P(ExprReduce, BadInputIsNamed) {
  Context ctx(GetParam());
  alignas(64) static float storage[64] = {};
  const Expr a = input<float>(0), b = input<float>(1);
  const Kernel one = compile({a + b});
  const Span<const float> x(storage, 16), y(storage + 16, 16);
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, compile({a, b}), {x, y}); }, "a kernel of one output");
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, one, {x}); }, "inputs given");
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, one, {x, Span<const double>(reinterpret_cast<const double*>(storage), 4)}); },
               "input 1 is f64");
  expect_error(Errc::size_mismatch, [&] { ew::sum(ctx, one, {x, Span<const float>(storage, 15)}); }, "input 1");
  expect_error(Errc::null_pointer, [&] { ew::asum(ctx, one, {x, Span<const float>(nullptr, 16)}); }, "input 1");
  const float* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(storage) + 2);
  expect_error(Errc::misaligned, [&] { ew::sum(ctx, one, {Span<const float>(odd, 16), y}); }, "input 0");
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, compile({param<float>(0) * 2}), {}, {1.0}); }, "reads no input");
  expect_error(Errc::foreign_memory, [&] { ew::sum(ctx, one, {x, Span<const float>(storage, 16, MemorySpace::device)}); },
               "input 1");
}

TEST(ExprReduceCuda, CudaRefuses) {
  EW_SKIP_IF_UNUSABLE(Backend::cuda);
  Context ctx(Backend::cuda);
  Buffer<float> x(ctx, 16);
  const std::vector<float> host(16, 1.0f);
  x.upload(host.data(), 16);
  const Expr a = input<float>(0);
  expect_error(Errc::unsupported, [&] { ew::sum(ctx, compile({a * a}), {Span<const float>(x.data(), 16, x.space())}); },
               "not on the cuda backend");
}

INSTANTIATE_TEST_SUITE_P(scalar, ExprReduce, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, ExprReduce, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, ExprReduce, testing::Values(Backend::kokkos));

}  // namespace
}  // namespace ew::test

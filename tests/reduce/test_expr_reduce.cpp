// Reductions over an expression (ew/expr_reduce.hpp) on every backend: ew::sum(ctx, kernel,
// inputs) must give the bits of evaluating the kernel into an array of its output dtype and
// calling ew::sum on that array, for fixed and random expressions (mixed f32/f64 inputs,
// outputs of every dtype), sizes around the plan's blocks and the chunks, offsets; the same
// bits on every backend; bad input named. cuda: the operands in device memory (its fused
// kernel), its run of plan blocks forced small through the backend's test hook so that the
// same sizes cross its edges, plus every run size, sizes above the default, pinned inputs
// (the chunked path) and managed ones; labelled gpu (the cuda/ prefix), skipped with the
// reason without a GPU.
#include <random>
#include <string>

#include "reduce_support.hpp"
#if defined(EW_TEST_CUDA_HOOKS)
#include "expr_reduce_tuning.hpp"  // backends/cuda: the chunk hook, without CUDA headers
#endif

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

// A copy of host data in a context's memory (device memory on cuda, unless asked otherwise).
template <class T>
Buffer<T> placed(Context& ctx, const std::vector<T>& v, MemorySpace where = MemorySpace::unknown) {
  Buffer<T> b(ctx, v.size(), where);
  b.upload(v.data(), v.size());
  return b;
}

// Inputs where the context reads them: host memory on the CPU backends, device memory on cuda.
struct Placed {
  Buffer<float> a, c;
  Buffer<double> b;
  Placed(Context& ctx, const Inputs& in, MemorySpace where = MemorySpace::unknown)
      : a(placed(ctx, in.a, where)), c(placed(ctx, in.c, where)), b(placed(ctx, in.b, where)) {}
  std::vector<InputArray> arrays(std::size_t off, std::size_t n) const {
    return {Span<const float>(a.data() + off, n, a.space()), Span<const double>(b.data() + off, n, b.space()),
            Span<const float>(c.data() + off, n, c.space())};
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

// The unfused form: the kernel evaluated into an array of the context's memory (poisoned
// first: an element left unwritten shows), the array reduced by ew::sum or ew::asum.
double unfused(Context& ctx, bool absolute, const Kernel& k, const std::vector<InputArray>& in, double param) {
  const std::size_t n = in[0].size;
  const double params[1] = {param};
  const auto run = [&](auto tag) -> double {
    using T = decltype(tag);
    Buffer<T> values(ctx, n);
    const std::vector<T> poison(n, T(std::numeric_limits<float>::quiet_NaN()));
    values.upload(poison.data(), n);
    const OutputArray out = values.span();
    k.run(ctx, in.data(), in.size(), &out, 1, params, static_cast<std::size_t>(k.params()));
    const Span<const T> x(values.data(), n, values.space());
    return static_cast<double>(absolute ? ew::asum<T>(ctx, x) : ew::sum<T>(ctx, x));
  };
  switch (k.output_dtype(0)) {
    case DType::f32: return run(0.0f);
    case DType::f64: return run(0.0);
    case DType::f16: return run(half{});
    default: return run(bfloat16{});
  }
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

// The cuda run (fused kernel) or chunk (pinned inputs), in plan blocks, for the tests that do
// not sweep it: the CPU backends' chunk, so that `sizes` cross the GPU's run edges too.
constexpr std::size_t gpu_chunk_blocks = chunk / B;

void force_gpu_chunk(std::size_t blocks) {
#if defined(EW_TEST_CUDA_HOOKS)
  ew::detail::cuda::set_expr_reduce_chunk_blocks(blocks);
#else
  (void)blocks;
#endif
}

class ExprReduce : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(GetParam());
    if (GetParam() == Backend::cuda) force_gpu_chunk(gpu_chunk_blocks);
  }
  void TearDown() override {
    if (GetParam() == Backend::cuda) force_gpu_chunk(0);
  }

  // Every size and offset: fused == unfused on this backend, and == scalar's fused.
  void check(const Kernel& k, const Inputs& data, const std::string& what,
             const std::vector<std::size_t>& ns = std::vector<std::size_t>(std::begin(sizes), std::end(sizes))) {
    Context ctx(GetParam());
    Context ref(Backend::scalar);
    const Placed here(ctx, data);
    for (std::size_t n : ns)
      for (std::size_t off : {std::size_t(0), std::size_t(1)})
        for (bool absolute : {false, true}) {
          std::vector<InputArray> in = here.arrays(off, n), host = data.arrays(off, n);
          in.resize(static_cast<std::size_t>(k.inputs()));  // the slots up to the last one read
          host.resize(in.size());
          const double want = unfused(ctx, absolute, k, in, 0.75);
          const double got = fused(ctx, absolute, k, in, 0.75);
          const double scalar = fused(ref, absolute, k, host, 0.75);
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
  const auto in = [&] {
    Buffer<float> b = placed(ctx, x);
    return fused(ctx, false, k, {Span<const float>(b.data(), x.size(), b.space())}, 0);
  };
  EXPECT_EQ(in(), std::numeric_limits<double>::infinity());
  x[7] = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(in()));
  // A 16-bit output that overflows to infinity, and the same in asum: -inf + inf = NaN.
  const Kernel big = compile({cast<half>(a * 1e5f)});
  x = random_vector<float>(B + 9);
  x[3] = 2.0f, x[B + 4] = -3.0f;
  Buffer<float> b = placed(ctx, x);
  const std::vector<InputArray> bs{Span<const float>(b.data(), x.size(), b.space())};
  EXPECT_TRUE(std::isnan(fused(ctx, false, big, bs, 0)));
  EXPECT_EQ(fused(ctx, true, big, bs, 0), std::numeric_limits<double>::infinity());
  const std::vector<InputArray> none{Span<const float>()};
  EXPECT_TRUE(same_bits(fused(ctx, false, k, none, 0), 0.0));
  EXPECT_TRUE(same_bits(fused(ctx, true, k, none, 0), 0.0));
}

TEST_P(ExprReduce, BadInputIsNamed) {
  Context ctx(GetParam());
  // The arguments in the context's own memory, so that only what each case breaks is wrong
  // (kokkos on a GPU checks where an operand lives before the backend sees it).
  Buffer<float> buffer(ctx, 64);
  const float* storage = buffer.data();
  const MemorySpace space = buffer.space();
  const Expr a = input<float>(0), b = input<float>(1);
  const Kernel one = compile({a + b});
  const Span<const float> x(storage, 16, space), y(storage + 16, 16, space);
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, compile({a, b}), {x, y}); }, "a kernel of one output");
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, one, {x}); }, "inputs given");
  expect_error(Errc::invalid_argument,
               [&] { ew::sum(ctx, one, {x, Span<const double>(reinterpret_cast<const double*>(storage), 4, space)}); },
               "input 1 is f64");
  expect_error(Errc::size_mismatch, [&] { ew::sum(ctx, one, {x, Span<const float>(storage, 15, space)}); }, "input 1");
  expect_error(Errc::null_pointer, [&] { ew::asum(ctx, one, {x, Span<const float>(nullptr, 16)}); }, "input 1");
  const float* odd = reinterpret_cast<const float*>(reinterpret_cast<const char*>(storage) + 2);
  expect_error(Errc::misaligned, [&] { ew::sum(ctx, one, {Span<const float>(odd, 16, space), y}); }, "input 0");
  expect_error(Errc::invalid_argument, [&] { ew::sum(ctx, compile({param<float>(0) * 2}), {}, {1.0}); }, "reads no input");
  // The pointer forms' arrays themselves: null with a count is refused before an entry is read.
  expect_error(Errc::null_pointer, [&] { ew::sum(ctx, one, nullptr, 2, nullptr, 0); },
               "ew::sum over an ew::Kernel: inputs is null, with a count of 2");
  const InputArray both[] = {x, y};
  const Kernel scaled = compile({a * param<float>(0) + b});
  expect_error(Errc::null_pointer, [&] { ew::asum(ctx, scaled, both, 2, nullptr, 1); },
               "ew::asum over an ew::Kernel: params is null, with a count of 1");
  alignas(64) static float host[32] = {};
  const Span<const float> hx(host, 16), hy(host + 16, 16);
  if (ctx.device() >= 0)  // pageable memory: refused as ew::sum on a GPU refuses it
    expect_error(Errc::foreign_memory, [&] { ew::sum(ctx, one, {hx, hy}); },
                 GetParam() == Backend::cuda ? "input 0 is pageable host memory" : "input 0 lives in host memory");
  else
    expect_error(Errc::foreign_memory, [&] { ew::sum(ctx, one, {hx, Span<const float>(host, 16, MemorySpace::device)}); },
                 "input 1");
  // An empty input holds no memory: the identity, wherever the context runs.
  EXPECT_TRUE(same_bits(ew::sum(ctx, one, {Span<const float>(), Span<const float>()}), 0.0));
}

INSTANTIATE_TEST_SUITE_P(scalar, ExprReduce, testing::Values(Backend::scalar));
INSTANTIATE_TEST_SUITE_P(highway, ExprReduce, testing::Values(Backend::highway));
INSTANTIATE_TEST_SUITE_P(kokkos, ExprReduce, testing::Values(Backend::kokkos));
INSTANTIATE_TEST_SUITE_P(cuda, ExprReduce, testing::Values(Backend::cuda));

#if defined(EW_TEST_CUDA_HOOKS)
// The cuda run (or chunk): every power of two of plan blocks must give the same bits (1
// block, a few, 256, the default of this GPU).
class ExprReduceGpu : public ExprReduce {};

TEST_P(ExprReduceGpu, EveryChunkSizeGivesTheSameBits) {
  const Inputs data;
  const Expr a = input<float>(0), b = input<double>(1), c = input<float>(2);
  const std::vector<std::size_t> ns{B - 1, B, 5 * B + 7, chunk + 3, 3 * chunk + 5000};
  for (std::size_t blocks : {1, 2, 8, 256, 0}) {
    force_gpu_chunk(blocks);
    const std::string at = " (chunk of " + (blocks ? std::to_string(blocks) + " plan blocks)" : std::string("the default)"));
    check(compile({(a - c) * (a - c)}), data, "(a - c)^2 f32" + at, ns);
    check(compile({cast<half>(a * c)}), data, "f16(a * c)" + at, ns);
    check(compile({(a - b) * (a - b)}), data, "(a - b)^2 f64" + at, ns);
    if (HasFailure()) return;
  }
}

// Above 2^22 elements: several runs (or chunks) of the size the library really uses, an odd
// tail, an offset.
TEST_P(ExprReduceGpu, AboveTheDefaultChunk) {
  force_gpu_chunk(0);
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  const std::size_t n = (std::size_t(1) << 22) + (std::size_t(1) << 21) + 12345;
  const std::vector<float> x = cancelling_vector<float>(n + 1), y = random_vector<float>(n + 1);
  const Buffer<float> dx = placed(ctx, x), dy = placed(ctx, y);
  const Expr a = input<float>(0), b = input<float>(1);
  for (const Kernel& k : {compile({(a - b) * (a - b)}), compile({cast<bfloat16>(a * b)}), compile({cast<double>(a) * b})})
    for (std::size_t off : {std::size_t(0), std::size_t(1)})
      for (bool absolute : {false, true}) {
        const std::vector<InputArray> in{Span<const float>(dx.data() + off, n, dx.space()),
                                         Span<const float>(dy.data() + off, n, dy.space())};
        const std::vector<InputArray> host{Span<const float>(x.data() + off, n), Span<const float>(y.data() + off, n)};
        const double got = fused(ctx, absolute, k, in, 0), want = unfused(ctx, absolute, k, in, 0);
        const double scalar = fused(ref, absolute, k, host, 0);
        ASSERT_TRUE(same_bits(got, want) && same_bits(got, scalar))
            << (absolute ? "asum of " : "sum of ") << k.str() << " n=" << n << " offset " << off << ": fused "
            << bits_of(got) << ", evaluated then reduced " << bits_of(want) << ", scalar fused " << bits_of(scalar);
      }
}

// Pinned and managed inputs: the same bits as device memory.
TEST_P(ExprReduceGpu, PinnedAndManagedInputs) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  const Inputs data;
  const Expr a = input<float>(0), b = input<double>(1);
  const Kernel k = compile({(a - b) * (a - b)});
  const std::size_t n = 3 * chunk + 5000;
  std::vector<InputArray> host = data.arrays(1, n);
  host.resize(2);  // the kernel reads two of the three arrays
  const double want = fused(ref, false, k, host, 0);
  for (MemorySpace where : {MemorySpace::pinned, MemorySpace::managed}) {
    const Placed there(ctx, data, where);
    std::vector<InputArray> in = there.arrays(1, n);
    in.resize(2);
    const double got = fused(ctx, false, k, in, 0);
    EXPECT_TRUE(same_bits(got, want)) << to_string(where) << ": " << bits_of(got) << ", scalar " << bits_of(want);
  }
}

TEST_P(ExprReduceGpu, ChunkHookRefusesWhatIsNotAPowerOfTwo) {
  expect_error(Errc::invalid_argument, [] { ew::detail::cuda::set_expr_reduce_chunk_blocks(3); }, "power of two");
  expect_error(Errc::invalid_argument, [] { ew::detail::cuda::set_expr_reduce_chunk_blocks(std::size_t(1) << 21); },
               "power of two");
}

INSTANTIATE_TEST_SUITE_P(cuda, ExprReduceGpu, testing::Values(Backend::cuda));
#endif

}  // namespace
}  // namespace ew::test

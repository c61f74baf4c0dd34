// The cuda reductions with every tuning (backends/cuda/reduce.hpp's test hook): the register
// kernel with runs of 1, 2, 8, 32 or 256 plan blocks, every built (lanes per thread, loads)
// shape, a capped grid whose warps take several runs; the staged kernel with both rings;
// aligned and misaligned operands. The size-based choices
// differ between GPUs; all must give the scalar backend's bits. Labelled gpu (the cuda/
// prefix); skipped with the reason without a GPU.
#include <optional>
#include <utility>

#include "reduce_support.hpp"

#include "ew_internal/reduce_plan.hpp"  // plan::Kind
#include "reduce_tuning.hpp"  // backends/cuda: the tuning hook, without CUDA headers

namespace ew::test {
namespace {

class ReduceGrid : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(GetParam()); }
  void TearDown() override { ew::detail::cuda::set_reduce_tuning({}); }
};

// Every reduction of x[offset, offset + n) on the GPU against the scalar backend's.
template <class T>
struct Case {
  std::size_t offset, n;
  std::vector<Got<T>> want;  // per all_reds
};

// With `kernel` given, each sum, asum, dot and 2-norm must have run that sum kernel (and
// min/max none).
template <class T>
void check_all(Context& ctx, const Buffer<T>& x, const Buffer<T>& y, const Case<T>& c, const std::string& what,
               std::optional<ew::detail::cuda::SumKernel> kernel = std::nullopt) {
  using ew::detail::cuda::SumKernel;
  std::size_t k = 0;
  for (Red r : all_reds) {
    const Got<T> got = reduce<T>(ctx, r, Span<const T>(x.data() + c.offset, c.n, x.space()),
                                 Span<const T>(y.data() + c.offset, c.n, y.space()));
    const Got<T>& want = c.want[k++];
    ASSERT_TRUE(got == want) << name(r) << " " << to_string(dtype_v<T>) << " n=" << c.n << " offset " << c.offset
                             << " " << what << ": " << show(got) << ", scalar " << show(want);
    if (!kernel) continue;
    const bool extremum = r == Red::min || r == Red::max;
    ASSERT_EQ(static_cast<int>(ew::detail::cuda::take_last_sum_kernel()),
              static_cast<int>(extremum ? SumKernel::none : *kernel))
        << name(r) << " " << to_string(dtype_v<T>) << " n=" << c.n << " offset " << c.offset << " " << what
        << ": the kernel that ran (0 none, 1 register, 2 staged)";
  }
}

template <class T>
std::vector<Case<T>> cases(Context& ref, const std::vector<T>& xs, const std::vector<T>& ys,
                           std::initializer_list<std::size_t> sizes, std::initializer_list<std::size_t> offsets) {
  std::vector<Case<T>> out;
  for (std::size_t n : sizes)
    for (std::size_t offset : offsets) {
      Case<T> c{offset, n, {}};
      for (Red r : all_reds)
        c.want.push_back(reduce<T>(ref, r, Span<const T>(xs.data() + offset, n), Span<const T>(ys.data() + offset, n)));
      out.push_back(c);
    }
  return out;
}

// The lanes per thread each dtype is built with (reduce.cu's built()): f64 vectors stop at
// 16 bytes, f32 at 4 lanes, 16-bit data take 1 lane or 8 (one 16-byte vector).
template <class T>
bool built_for(int lanes) {
  if constexpr (is_storage16_v<T>) return lanes == 1 || lanes == 8;
  else return lanes <= (sizeof(T) == 8 ? 2 : 4);
}

template <class T>
void every_grid(Context& ctx, Context& ref) {
  using ew::detail::cuda::ReduceTuning;
  const std::size_t total = 300 * B + 77;
  const std::vector<T> xs = cancelling_vector<T>(total), ys = random_vector<T>(total);
  Buffer<T> x(ctx, total), y(ctx, total);
  x.upload(xs.data(), total);
  y.upload(ys.data(), total);
  const std::vector<Case<T>> tuned = cases<T>(ref, xs, ys, {B - 1, 9 * B + 1, total - 3}, {0, 1, 3});
  std::size_t count = 0;
  const ew::detail::cuda::ReduceShape* shapes = ew::detail::cuda::reduce_shapes(&count);
  for (std::size_t s = 0; s < count; ++s) {
    if (!built_for<T>(shapes[s].lanes_per_thread)) continue;
    for (std::size_t run : {1, 2, 8, 32, 256})
      for (int ctas : {-1, 1, 3}) {
        ReduceTuning t;
        t.lanes_per_thread = shapes[s].lanes_per_thread;
        t.loads = shapes[s].loads;
        t.run_blocks = run;
        t.ctas_per_sm = ctas;
        t.staged = -1;  // the register kernel, whatever the size
        ew::detail::cuda::set_reduce_tuning(t);
        const std::string what = std::to_string(t.lanes_per_thread) + " lanes x " + std::to_string(t.loads) +
                                 " loads, runs of " + std::to_string(run) + ", ctas/SM " + std::to_string(ctas);
        for (const Case<T>& c : tuned) check_all<T>(ctx, x, y, c, what);
      }
  }
  // The size-based choices, launched as they are (programmatic dependent launch on sm_90+:
  // each call's kernel may start while the one before drains) and with plain launches.
  const std::vector<Case<T>> sized = cases<T>(ref, xs, ys, {1, B, 64 * B + 5, total - 3}, {0, 1, 2, 3});
  ew::detail::cuda::set_reduce_tuning({});
  for (const Case<T>& c : sized) check_all<T>(ctx, x, y, c, "defaults");
  ReduceTuning plain;
  plain.dependent_launch = -1;
  ew::detail::cuda::set_reduce_tuning(plain);
  for (const Case<T>& c : sized) check_all<T>(ctx, x, y, c, "defaults, plain launches");
  // The value brought back by a copy after the kernel, as on a device that cannot map host memory.
  ReduceTuning copied;
  copied.mapped_result = -1;
  ew::detail::cuda::set_reduce_tuning(copied);
  for (const Case<T>& c : sized) check_all<T>(ctx, x, y, c, "defaults, value copied back");
  ew::detail::cuda::set_reduce_tuning({});
}

TEST_P(ReduceGrid, EveryGridGivesTheSameBits) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  every_grid<float>(ctx, ref);
  every_grid<double>(ctx, ref);
  every_grid<half>(ctx, ref);
  every_grid<bfloat16>(ctx, ref);
}

// A warp's binary counter deep in its levels (a lane each, moved by shuffles): runs of 4096
// plan blocks, taken one block (depth 13) or the widest vector (4 blocks: depth 11) at a
// time. The sizes end a run full, one block into the next run, and partway through one.
template <class T>
void deep_counter(Context& ctx, Context& ref) {
  using ew::detail::cuda::ReduceTuning;
  constexpr std::size_t run = 4096;
  const std::size_t total = run * B + 80;
  const std::vector<T> xs = cancelling_vector<T>(total), ys = random_vector<T>(total);
  Buffer<T> x(ctx, total), y(ctx, total);
  x.upload(xs.data(), total);
  y.upload(ys.data(), total);
  const std::vector<Case<T>> deep = cases<T>(ref, xs, ys, {run * B, run * B + 77, 3001 * B + 5}, {0, 1});
  for (int lanes : {1, sizeof(T) == 8 ? 2 : 4}) {
    ReduceTuning t;
    t.lanes_per_thread = lanes;
    t.loads = 8;
    t.run_blocks = run;
    t.staged = -1;
    ew::detail::cuda::set_reduce_tuning(t);
    for (const Case<T>& c : deep) check_all<T>(ctx, x, y, c, std::to_string(lanes) + " lanes, runs of 4096 blocks");
  }
}

TEST_P(ReduceGrid, DeepCounterGivesTheSameBits) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  deep_counter<float>(ctx, ref);
  deep_counter<double>(ctx, ref);
}

// The staged kernel (sm_90+: plan blocks copied into shared memory, units of 8 R plan blocks
// combined in the CUDA block) on xs and ys at `sizes`, with rings of 2 and 3 pieces and R =
// 1..8, at offsets that keep the operands 16-byte aligned and at one that does not (the
// register kernel then, by the copy engine's rule). Elsewhere than sm_90+ the register
// kernel runs: the bits must hold either way, and each call must have run the kernel the
// rules name.
template <class T>
void staged_on(Context& ctx, Context& ref, const std::vector<T>& xs, const std::vector<T>& ys,
               std::initializer_list<std::size_t> sizes) {
  using ew::detail::cuda::SumKernel;
  constexpr std::size_t aligned = 16 / sizeof(T);
  Buffer<T> x(ctx, xs.size()), y(ctx, ys.size());
  x.upload(xs.data(), xs.size());
  y.upload(ys.data(), ys.size());
  const std::vector<Case<T>> all = cases<T>(ref, xs, ys, sizes, {0, aligned, 1});
  for (auto [slots, run] : {std::pair{2, 1}, {3, 1}, {1, 1}, {2, 2}, {1, 2}, {1, 4}, {3, 4}, {2, 8}}) {
    const bool here = ew::detail::cuda::staged_kernel_supported(ctx.device(), slots);
    ew::detail::cuda::ReduceTuning t;
    t.staged = 1;
    t.stage_slots = slots;
    t.stage_run = run;
    ew::detail::cuda::set_reduce_tuning(t);
    const std::string what = "staged, " + std::to_string(slots) + " slots, units of 8 x " + std::to_string(run);
    for (const Case<T>& c : all) {
      check_all<T>(ctx, x, y, c, what, here && c.offset % aligned == 0 ? SumKernel::staged : SumKernel::registers);
      if (::testing::Test::HasFatalFailure()) return;
      // A dot with x aligned and y not: the register kernel (the copy engine needs both aligned).
      if (c.offset % aligned != 0) continue;
      const Span<const T> xs_at(xs.data() + c.offset, c.n), ys_at(ys.data() + c.offset + 1, c.n);
      const Got<T> want_dot = reduce<T>(ref, Red::dot, xs_at, ys_at);
      const Got<T> got_dot = reduce<T>(ctx, Red::dot, Span<const T>(x.data() + c.offset, c.n, x.space()),
                                       Span<const T>(y.data() + c.offset + 1, c.n, y.space()));
      ASSERT_TRUE(got_dot == want_dot) << "dot, y misaligned, " << what << " n=" << c.n << ": " << show(got_dot)
                                       << ", scalar " << show(want_dot);
      ASSERT_EQ(static_cast<int>(ew::detail::cuda::take_last_sum_kernel()), static_cast<int>(SumKernel::registers))
          << "dot, y misaligned, " << what << ": the kernel that ran (0 none, 1 register, 2 staged)";
    }
  }
  ew::detail::cuda::set_reduce_tuning({});
}

template <class T>
void staged(Context& ctx, Context& ref, std::initializer_list<std::size_t> sizes) {
  const std::size_t total = std::max(sizes) + 16;
  staged_on<T>(ctx, ref, cancelling_vector<T>(total), random_vector<T>(total), sizes);
}

// One plan block, a short one alone and after full ones, whole and cut units, warps without
// a plan block in the last unit (small enough for the sanitizers).
TEST_P(ReduceGrid, StagedKernelGivesTheSameBits) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  for (auto f : {staged<float>, staged<double>}) f(ctx, ref, {1, B - 1, B, B + 1, 64 * B, 64 * B + 1, 129 * B + 7});
}

// CUDA blocks taking several units each (4096 plan blocks: about four a warp on 132 SMs), a
// last, partial round of units, and (1056 plan blocks, 132 units of 8 on 132 CUDA blocks)
// whole rounds alone, the last unit cut.
TEST_P(ReduceGrid, StagedKernelWithSeveralBlocksAWarp) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  for (auto f : {staged<float>, staged<double>}) f(ctx, ref, {1100 * B + 3, 1056 * B - 5, 4096 * B, 4096 * B + 77});
}

// More units than the last CUDA block loads at once (a forced R = 1 past 4096 units of 8 plan
// blocks: each of its threads then takes 32 unit nodes, 16 at a time).
TEST_P(ReduceGrid, StagedKernelWithManyUnits) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  const std::size_t n = 4100 * 8 * B + 5;
  const std::vector<float> xs = cancelling_vector<float>(n), ys = random_vector<float>(n);
  Buffer<float> x(ctx, n), y(ctx, n);
  x.upload(xs.data(), n);
  y.upload(ys.data(), n);
  const std::vector<Case<float>> all = cases<float>(ref, xs, ys, {n}, {0});
  ew::detail::cuda::ReduceTuning t;
  t.staged = 1;
  t.stage_slots = 2;
  t.stage_run = 1;
  ew::detail::cuda::set_reduce_tuning(t);
  const bool here = ew::detail::cuda::staged_kernel_supported(ctx.device(), 2);
  check_all<float>(ctx, x, y, all[0], "staged, 2 slots, units of 8 x 1",
                   here ? ew::detail::cuda::SumKernel::staged : ew::detail::cuda::SumKernel::registers);
}

// NaN, infinities, signed zeros and the 2-norm's big and small classes through the staged
// kernel (below its default sizes, the special-value tests of test_reduce.cpp run the
// register kernel).
TEST_P(ReduceGrid, StagedKernelWithSpecialValues) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  for (int pattern = 0; pattern < special_patterns; ++pattern) {
    const auto [xf, yf] = special_vectors<float>(special_size + 16, pattern);
    const auto [xd, yd] = special_vectors<double>(special_size + 16, pattern);
    staged_on<float>(ctx, ref, xf, yf, {special_size, B + 3});
    if (HasFatalFailure()) FAIL() << "pattern " << pattern;
    staged_on<double>(ctx, ref, xd, yd, {special_size, B + 3});
    if (HasFatalFailure()) FAIL() << "pattern " << pattern;
  }
}

// Where the defaults take the staged kernel (host logic, no GPU needed): the sizes measured
// faster on both an H100 and an H200 (docs/PERFORMANCE.md, "Twelfth round"), on 132 SMs and
// on 114 (an H100 PCIe), whose plan blocks per SM differ; the f32 dot from 2^24 where the
// memory gives each SM less than 30 GB/s (the H100s), at 2^23..2^25 where it gives more (the
// H200: "Nineteenth round"), never where the peak is unknown.
TEST(ReduceDefaults, StagedKernelWhereItMeasuredFaster) {
  using ew::detail::plan::Kind;
  struct Gpu {
    const char* name;
    int sms;
    double bytes_per_second;
    int f32_dot_from, f32_dot_to;  // log2 sizes of the f32 dot on the staged kernel
    int f32_sum_to, f64_sum_to;    // ... and the last of the sums' (from 2^24)
  };
  const Gpu gpus[] = {{"H100 SXM", 132, 3.35e12, 24, 31, 25, 25}, {"H200", 132, 4.8e12, 23, 25, 31, 27},
                      {"H100 PCIe", 114, 2.0e12, 24, 31, 25, 25}, {"an unknown memory", 132, 0.0, 1, 0, 25, 25}};
  for (const Gpu& g : gpus) {
    const auto staged = [&](Kind kind, DType dtype, int log2_n) {
      return ew::detail::cuda::default_reduce_tuning(kind, dtype, std::size_t(1) << log2_n, g.sms, g.bytes_per_second)
                 .staged == 1;
    };
    for (int e = 20; e <= 31; ++e) {
      const std::string at = "2^" + std::to_string(e) + " on " + g.name;
      EXPECT_EQ(staged(Kind::sum, DType::f32, e), e >= 24 && e <= g.f32_sum_to) << "f32 sum " << at;
      EXPECT_EQ(staged(Kind::sum, DType::f64, e), e >= 24 && e <= g.f64_sum_to) << "f64 sum " << at;
      EXPECT_EQ(staged(Kind::dot, DType::f64, e), e >= 23 && e <= 27) << "f64 dot " << at;
      EXPECT_EQ(staged(Kind::norm2, DType::f64, e), e >= 22) << "f64 2-norm " << at;
      EXPECT_EQ(staged(Kind::dot, DType::f32, e), e >= g.f32_dot_from && e <= g.f32_dot_to) << "f32 dot " << at;
      EXPECT_FALSE(staged(Kind::norm2, DType::f32, e)) << "f32 2-norm " << at;
      EXPECT_FALSE(staged(Kind::asum, DType::f64, e)) << "f64 asum " << at;
      EXPECT_FALSE(staged(Kind::sum, DType::f16, e)) << "f16 sum " << at;
    }
  }
}

// The f32 sum's ring on the staged kernel: one piece a warp and one CUDA block an SM where the
// memory gives each SM 30 GB/s or more (the H200, where it measured faster), with units of 32
// plan blocks from 2^25; two pieces, the blocks that fit and units by the unit count's rule
// elsewhere (the H100s, an unknown memory); the other sums keep two pieces and that rule.
TEST(ReduceDefaults, F32SumRingOfOnePieceWhereMemoryIsFast) {
  using ew::detail::plan::Kind;
  const std::pair<double, bool> gpus[] = {{4.8e12, true}, {3.35e12, false}, {0.0, false}};
  for (auto [bytes_per_second, fast] : gpus)
    for (int e : {24, 25}) {
      const auto t = [&](Kind kind, DType dtype) {
        return ew::detail::cuda::default_reduce_tuning(kind, dtype, std::size_t(1) << e, 132, bytes_per_second);
      };
      const auto f32 = t(Kind::sum, DType::f32);
      EXPECT_EQ(f32.staged, 1) << e;
      EXPECT_EQ(f32.stage_slots, fast ? 1 : 2) << bytes_per_second << " at 2^" << e;
      EXPECT_EQ(f32.stage_ctas_per_sm, fast ? 1 : -1) << bytes_per_second << " at 2^" << e;
      EXPECT_EQ(f32.stage_run, fast && e >= 25 ? 4 : 1) << bytes_per_second << " at 2^" << e;
      const auto f64 = t(Kind::sum, DType::f64);
      EXPECT_EQ(f64.stage_slots, 2) << e;
      EXPECT_EQ(f64.stage_ctas_per_sm, -1) << e;
      EXPECT_EQ(f64.stage_run, 1) << e;
    }
}

// Shapes that are not built are refused by name, before anything runs.
TEST_P(ReduceGrid, UnbuiltTuningIsRefused) {
  ew::detail::cuda::ReduceTuning t;
  t.lanes_per_thread = 3;
  t.loads = 8;
  EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  t = {};
  t.run_blocks = 3;
  EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  t = {};
  t.dependent_launch = 1;
  EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  t = {};
  t.mapped_result = 1;
  EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  t = {};
  t.staged = 2;
  EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  for (int slots : {-1, 4}) {
    t = {};
    t.stage_slots = slots;
    EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  }
  for (int ctas : {-2, 9}) {
    t = {};
    t.stage_ctas_per_sm = ctas;
    EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  }
  for (int run : {-1, 3, 16}) {
    t = {};
    t.stage_run = run;
    EXPECT_THROW(ew::detail::cuda::set_reduce_tuning(t), Error);
  }
  // f64 vectors stop at 16 bytes: 4 lanes per thread is f32 only.
  t = {};
  t.lanes_per_thread = 4;
  t.loads = 4;
  ew::detail::cuda::set_reduce_tuning(t);
  Context ctx(GetParam());
  Buffer<double> x(ctx, 10);
  const std::vector<double> host(10, 1.0);
  x.upload(host.data(), 10);
  try {
    (void)ew::sum<double>(ctx, Span<const double>(x.data(), 10, x.space()));
    ADD_FAILURE() << "4 lanes per thread on f64 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
  }
  // 16-bit data take 1 or 8 lanes per thread, f32 at most 4.
  Buffer<half> h(ctx, 10);
  const std::vector<half> hosth(10, half(1.0f));
  h.upload(hosth.data(), 10);
  try {
    (void)ew::sum<half>(ctx, Span<const half>(h.data(), 10, h.space()));
    ADD_FAILURE() << "4 lanes per thread on f16 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
  }
  t = {};
  t.lanes_per_thread = 8;
  t.loads = 4;
  ew::detail::cuda::set_reduce_tuning(t);
  Buffer<float> f(ctx, 10);
  const std::vector<float> hostf(10, 1.0f);
  f.upload(hostf.data(), 10);
  try {
    (void)ew::sum<float>(ctx, Span<const float>(f.data(), 10, f.space()));
    ADD_FAILURE() << "8 lanes per thread on f32 ran";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::invalid_argument) << e.what();
  }
  EXPECT_EQ(ew::sum<half>(ctx, Span<const half>(h.data(), 10, h.space())), 10.0f);
}

// Pinned host memory is read by the kernel directly; managed memory too.
TEST_P(ReduceGrid, PinnedAndManagedOperands) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  const std::size_t n = 7 * B + 3;
  const std::vector<double> xs = cancelling_vector<double>(n);
  for (MemorySpace space : {MemorySpace::pinned, MemorySpace::managed}) {
    Buffer<double> x(ctx, n, space);
    x.upload(xs.data(), n);
    for (Red r : all_reds) {
      const Got<double> want = reduce<double>(ref, r, Span<const double>(xs.data(), n), Span<const double>(xs.data(), n));
      const Got<double> got = reduce<double>(ctx, r, Span<const double>(x.data(), n, x.space()),
                                             Span<const double>(x.data(), n, x.space()));
      EXPECT_TRUE(got == want) << name(r) << " " << to_string(space) << ": " << show(got) << ", scalar " << show(want);
    }
  }
}

// min/max through the kernel's whole batches (8 vectors a thread, the next 8 in flight): CUDA
// blocks of 16 plan blocks (32768 elements, 2048 or more vectors) and the default one wave, at
// offsets that put the array off and on 16-byte boundaries, with a NaN, ties and the extremes
// late in the array. Small enough for compute-sanitizer (reduce_check.sh runs it there).
template <class T>
void extrema_in_batches(Context& ctx, Context& ref) {
  using ew::detail::cuda::ReduceTuning;
  const std::size_t total = 40 * B + 13;
  std::vector<T> xs = random_vector<T>(total);
  xs[31 * B + 7] = xs[33 * B + 1] = T(1e4f);    // a tie for max: the first wins
  xs[35 * B + 2] = xs[36 * B + 9] = T(-1e4f);   // and for min
  for (int nan = 0; nan < 2; ++nan) {
    if (nan) xs[38 * B + 5] = T(std::numeric_limits<float>::quiet_NaN());
    Buffer<T> x(ctx, total);
    x.upload(xs.data(), total);
    for (std::size_t run : {std::size_t(16), std::size_t(0)}) {
      ReduceTuning t;
      t.run_blocks = run;
      ew::detail::cuda::set_reduce_tuning(t);
      for (std::size_t offset : {0, 1, 3})
        for (Red r : {Red::min, Red::max}) {
          const std::size_t n = total - offset;
          const Got<T> want = reduce<T>(ref, r, Span<const T>(xs.data() + offset, n), Span<const T>(xs.data() + offset, n));
          const Got<T> got = reduce<T>(ctx, r, Span<const T>(x.data() + offset, n, x.space()),
                                       Span<const T>(x.data() + offset, n, x.space()));
          ASSERT_TRUE(got == want) << name(r) << " " << to_string(dtype_v<T>) << " offset " << offset << " runs of "
                                   << run << (nan ? " with a NaN" : "") << ": " << show(got) << ", scalar " << show(want);
        }
    }
  }
  ew::detail::cuda::set_reduce_tuning({});
}

TEST_P(ReduceGrid, ExtremaThroughWholeBatches) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  extrema_in_batches<float>(ctx, ref);
  extrema_in_batches<double>(ctx, ref);
  extrema_in_batches<half>(ctx, ref);
}

INSTANTIATE_TEST_SUITE_P(cuda, ReduceGrid, testing::Values(Backend::cuda));

}  // namespace
}  // namespace ew::test

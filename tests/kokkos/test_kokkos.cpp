// The Kokkos backend's own edges: sizes and offsets around the device kernel's tiles
// (2048 floats or 1024 doubles per 128 iterations), the host kernel's chunks and its
// streaming-store threshold (1 MiB of output); what the probe reports; options
// Kokkos cannot honour; memory the execution space cannot reach; on Cuda, the context's
// stream; the reductions in the space's own memory (on Cuda, the warps' kernels).
#include <Kokkos_Core.hpp>

#include <cmath>
#include <limits>
#include <thread>
#include <tuple>

#ifdef KOKKOS_ENABLE_CUDA
#include "gpu_thread_context.hpp"
#endif
#include "reduce/reduce_support.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

constexpr bool on_host =
    Kokkos::SpaceAccessibility<Kokkos::HostSpace, Kokkos::DefaultExecutionSpace::memory_space>::accessible;

constexpr std::size_t sizes[] = {2, 5, 2047, 2048, 2049, 4096 + 7, 65536 + 1, (1u << 17) - 1, 1u << 17,
                                 (1u << 18) - 1, 1u << 18, (1u << 18) + 1};
constexpr Op ops[] = {Op::copy, Op::scale, Op::add, Op::mul, Op::triad, Op::axpy, Op::axpby};

using Param = std::tuple<Op, DType, std::size_t, int>;
class KokkosOps : public testing::TestWithParam<Param> {};

TEST_P(KokkosOps, MatchesScalarReferenceBitForBit) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  auto [op, dtype, n, offsets] = GetParam();
  Context ctx(Backend::kokkos);
  if (dtype == DType::f32)
    expect_matches_reference<float>(ctx, op, n, offset_sets[offsets]);
  else
    expect_matches_reference<double>(ctx, op, n, offset_sets[offsets]);
}

std::string name(const testing::TestParamInfo<Param>& info) {
  auto [op, dtype, n, offsets] = info.param;
  return std::string(to_string(op)) + "_" + to_string(dtype) + "_n" + std::to_string(n) + "_off" + std::to_string(offsets);
}

INSTANTIATE_TEST_SUITE_P(Boundaries, KokkosOps,
                         testing::Combine(testing::ValuesIn(ops), testing::Values(DType::f32, DType::f64),
                                          testing::ValuesIn(sizes), testing::Range(0, offset_set_count)),
                         name);

// Every reduction bit for bit against the scalar backend in the space's own memory: on Cuda
// a warp a plan block and runs of 32 blocks folded by shuffles, so sizes around blocks and
// runs (a last run cut short, its lone left nodes), offsets 0 and 3, data that cancels,
// values in each of Blue's ranges for the f64 2-norm, NaN and infinities.
template <class T>
void reductions_match_scalar(std::vector<T> xs, const std::vector<T>& ys, const char* what) {
  Context ctx(Backend::kokkos), ref(Backend::scalar);
  constexpr std::size_t run = 32 * B;
  const std::size_t ns[] = {1, 31, 33, B - 1, B, B + 1, 31 * B + 5, run - 1, run, run + 1, 33 * B, 63 * B + 7, 64 * B,
                            3 * run + B + 3, (std::size_t(1) << 22) + 3};
  Operand<T> x{std::move(xs), nullptr}, y{ys, nullptr};
  for (std::size_t n : ns)
    for (std::size_t off : {std::size_t(0), std::size_t(3)})
      for (Red r : all_reds) {
        const Got<T> want = reduce<T>(ref, r, Span<const T>(x.host.data() + off, n), Span<const T>(y.host.data() + off, n));
        const Got<T> got = reduce<T>(ctx, r, x.span(ctx, off, n), y.span(ctx, off, n));
        ASSERT_TRUE(got == want) << what << ": " << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " offset "
                                 << off << ": " << show(got) << ", scalar " << show(want);
      }
}

TEST(KokkosBackend, ReductionsMatchScalarBitForBit) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  const std::size_t total = (std::size_t(1) << 22) + 8;
  reductions_match_scalar<float>(cancelling_vector<float>(total), random_vector<float>(total), "cancelling");
  reductions_match_scalar<double>(cancelling_vector<double>(total), random_vector<double>(total), "cancelling");
  reductions_match_scalar<half>(cancelling_vector<half>(total), random_vector<half>(total), "cancelling");
  reductions_match_scalar<bfloat16>(cancelling_vector<bfloat16>(total), random_vector<bfloat16>(total), "cancelling");
  // Blue's three ranges in one array, then NaN and infinities scattered over blocks and runs.
  std::vector<double> ranges = random_vector<double>(total);
  for (std::size_t i = 0; i < total; i += 3) ranges[i] *= (i / 3) % 2 ? 1e200 : 1e-200;
  reductions_match_scalar<double>(ranges, random_vector<double>(total), "Blue's ranges");
  const double inf = std::numeric_limits<double>::infinity(), nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> special = random_vector<double>(total);
  std::vector<float> special_f = random_vector<float>(total);
  for (std::size_t i : {std::size_t(5), B + 7, 40 * B + 1, 100 * B + 3}) special[i] = inf, special_f[i] = static_cast<float>(inf);
  for (std::size_t i : {std::size_t(70) * B + 9, 2000 * B}) special[i] = nan, special_f[i] = static_cast<float>(nan);
  special[80 * B] = -inf, special_f[80 * B] = static_cast<float>(-inf);
  reductions_match_scalar<double>(special, random_vector<double>(total), "special values");
  reductions_match_scalar<float>(special_f, random_vector<float>(total), "special values");
}

TEST(KokkosBackend, ProbeNamesVersionAndExecutionSpace) {
  BackendStatus s = backend_status(Backend::kokkos);
  ASSERT_TRUE(s.compiled);
  const std::string text = s.usable ? s.detail : s.reason;
  const std::string version = "Kokkos " + std::to_string(KOKKOS_VERSION / 10000) + "." +
                              std::to_string(KOKKOS_VERSION / 100 % 100) + "." + std::to_string(KOKKOS_VERSION % 100);
  EXPECT_NE(text.find(version), std::string::npos) << text;
  EXPECT_NE(text.find(Kokkos::DefaultExecutionSpace::name()), std::string::npos) << text;
}

TEST(KokkosBackend, MemoryTheSpaceCannotReachIsRefused) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  Context ctx(Backend::kokkos);
  std::vector<float> a(64, 1.0f), c(64);
  const MemorySpace foreign = on_host ? MemorySpace::device : MemorySpace::host;
  Operands<float> args;
  args.a = Span<const float>(a.data(), a.size(), foreign);
  args.out = Span<float>(c.data(), c.size(), foreign);
  try {
    run(ctx, Op::copy, args);
    FAIL() << "no error for " << to_string(foreign) << " memory";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::foreign_memory) << e.what();
  }
}

TEST(KokkosBackend, ThreadCountKokkosDoesNotRunIsAnError) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  Context first(Backend::kokkos);  // Kokkos runs from here on
  const int threads = Kokkos::DefaultExecutionSpace().concurrency();
  if (!on_host) GTEST_SKIP() << Kokkos::DefaultExecutionSpace::name() << " has no thread count to choose";
  ContextOptions options;
  options.threads = threads + 1;  // Serial runs exactly one
  expect_error(Errc::invalid_argument, [&] { Context ctx(Backend::kokkos, options); }, "ContextOptions::threads");
  options.threads = threads;
  Context same(Backend::kokkos, options);
}

#ifdef KOKKOS_ENABLE_CUDA
// Work goes to the borrowed stream and is asynchronous: the stream, not the context,
// is synchronized here, and the result is complete.
TEST(KokkosBackend, RunsOnTheBorrowedStream) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  {
    ContextOptions options;
    options.stream = stream;
    Context ctx(Backend::kokkos, options);
    EXPECT_EQ(ctx.native_stream(), static_cast<void*>(stream));
    const std::size_t n = (1u << 24) + 3;
    std::vector<float> a = random_vector<float>(n), b = random_vector<float>(n), want(n), got(n);
    reference(Op::add, n, a.data(), b.data(), want.data(), 0.0f, 0.0f);
    Buffer<float> da(ctx, n), db(ctx, n), dc(ctx, n);
    da.upload(a.data(), n);
    db.upload(b.data(), n);
    add<float>(ctx, da, db, dc);
    ASSERT_EQ(cudaMemcpyAsync(got.data(), dc.data(), n * sizeof(float), cudaMemcpyDeviceToHost, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    EXPECT_EQ(first_mismatch(got, want), -1);
  }
  cudaStreamDestroy(stream);
}

// Two contexts walk a transcendental formula, each on its stream, without waiting for each
// other (one-wave grids: the kernels overlap at their ends at least). Where the tile walk
// runs by default (fast memory behind each SM), 2^24 floats are 7.8 shares a thread, so each
// context's warps take pieces from its own queue: a queue shared between the streams would
// skip or repeat pieces. Both results have the scalar backend's bits.
TEST(KokkosBackend, TwoContextsWalkAtOnce) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  Context one(Backend::kokkos), two(Backend::kokkos), scalar(Backend::scalar);
  const Expr x = input<float>(0);
  const Kernel silu = compile({x * sigmoid(x)});
  const std::size_t n = (std::size_t(1) << 24) + 5;
  const std::vector<float> a = random_vector<float>(n), b = random_vector<float>(n);
  std::vector<float> want_a(n, poison<float>()), want_b(n, poison<float>());
  silu(scalar, {Span<const float>(a.data(), n)}, {Span<float>(want_a.data(), n)});
  silu(scalar, {Span<const float>(b.data(), n)}, {Span<float>(want_b.data(), n)});
  Buffer<float> da(one, n), db(two, n), out_a(one, n), out_b(two, n);
  da.upload(a.data(), n);
  db.upload(b.data(), n);
  const std::vector<float> poisoned(n, poison<float>());
  out_a.upload(poisoned.data(), n);
  out_b.upload(poisoned.data(), n);
  for (int round = 0; round < 4; ++round) {
    silu(one, {da.span()}, {out_a.span()});
    silu(two, {db.span()}, {out_b.span()});
  }
  one.synchronize();
  two.synchronize();
  std::vector<float> got_a(n), got_b(n);
  out_a.download(got_a.data(), n);
  out_b.download(got_b.data(), n);
  EXPECT_EQ(first_mismatch(got_a, want_a), -1);
  EXPECT_EQ(first_mismatch(got_b, want_b), -1);
}

TEST(KokkosBackend, OwnStreamPerContext) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  Context one(Backend::kokkos), two(Backend::kokkos);
  EXPECT_NE(one.native_stream(), nullptr);
  EXPECT_NE(one.native_stream(), two.native_stream());
  EXPECT_GE(one.device(), 0);
}

// A thread that has not used CUDA keeps no context through a context's whole life (its
// creation may initialize Kokkos, which sets its GPU current as it starts and pushes its
// instance's context, and Kokkos sets its GPU again as it launches). With two GPUs or more,
// where this test initializes Kokkos, Kokkos runs on the last GPU and GPU 0 gets no context
// from the library; the thread's fallback device is then Kokkos' GPU (docs/kokkos.md).
TEST(KokkosBackend, LeavesAThreadWithoutAContextWithNone) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ContextOptions o;
  const bool initializes = !Kokkos::is_initialized();
  if (initializes) o.device = count - 1;
  const bool gpu0_had_a_context = detail::cuda::primary_context_active(0);
  const ContextLife life = live_a_context(Backend::kokkos, o, [](ContextOptions&) {});
  expect_thread_context_kept(life, {});
  if (count > 1 && initializes && !gpu0_had_a_context) {
    EXPECT_EQ(life.device, count - 1);
    EXPECT_FALSE(detail::cuda::primary_context_active(0)) << "a context on GPU 0, which the process never used";
    EXPECT_EQ(life.device_after, std::vector<int>(context_steps().size(), count - 1));
  } else {
    std::printf("[ INFO     ] GPU 0's context not checked: %s\n",
                count == 1 ? "one GPU, Kokkos' own" : "Kokkos or GPU 0 was in use before the test");
  }
}

// A context the application made itself (driver API) stays current through every call, though
// Kokkos makes its GPU current by device as it initializes and launches; the library's work goes
// to the GPU's primary context.
TEST(KokkosBackend, KeepsTheApplicationsOwnContext) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  CUcontext mine = nullptr;
  const ContextLife life = live_a_context(Backend::kokkos, {}, [&](ContextOptions&) { mine = create_own_context(); });
  expect_thread_context_kept(life, {mine});
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(test_driver_calls().ctx_destroy(mine), CUDA_SUCCESS);
}

// Two contexts of the application's on the thread's stack: both stay, in their order, through
// a context's creation (where Kokkos may initialize and its instance starts) and every call.
TEST(KokkosBackend, KeepsTheApplicationsContextStack) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  CUcontext below = nullptr, top = nullptr;
  const ContextLife life = live_a_context(Backend::kokkos, {}, [&](ContextOptions&) {
    below = create_own_context();
    top = create_own_context();
  });
  expect_thread_context_kept(life, {top, below});
  for (CUcontext c : {top, below})
    if (c) EXPECT_EQ(test_driver_calls().ctx_destroy(c), CUDA_SUCCESS);
}

// Kokkos launches and allocates on its GPU's primary context whatever the stream: a stream of
// the application's own context is refused, with the reason, before anything runs.
TEST(KokkosBackend, RefusesAStreamOfAnotherContext) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  const ContextLife none = live_a_context(Backend::kokkos, {}, [](ContextOptions&) {});  // Kokkos initialized
  ASSERT_EQ(none.error, "");
  std::string refused;
  CUcontext mine = nullptr, after = nullptr;
  std::thread([&] {
    try {
      mine = create_own_context();
      cudaStream_t stream = nullptr;
      if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
        throw std::runtime_error("cudaStreamCreate failed");
      ContextOptions o;
      o.stream = stream;
      try {
        Context ctx(Backend::kokkos, o);
      } catch (const Error& e) {
        if (e.code() == Errc::invalid_argument) refused = e.what();
      }
      after = current_context();  // the refusal threw through the creation's scopes
      cudaStreamDestroy(stream);
      test_driver_calls().ctx_destroy(mine);
    } catch (const std::exception& e) {
      refused = std::string("set-up failed: ") + e.what();
    }
  }).join();
  EXPECT_NE(refused.find("ContextOptions::stream belongs to a CUDA context other than GPU"), std::string::npos)
      << refused;
  EXPECT_NE(mine, nullptr);
  EXPECT_EQ(after, mine) << "the thread's own context after the refused creation";
}

// An error the application has yet to read (a refused cudaSetDevice, kept as the thread's last
// error) is neither taken for the reductions' nor cleared by them: sum and max_element give the
// scalar backend's results through it, and the application reads its error after the
// context's destruction. The library's runtime is its own (CudaRuntime.PrivateToTheLibrary), so
// what this checks is that nothing reaches the application's: this test's runtime is the one
// Kokkos' library was linked with. (What the library's code does with an error pending in its
// own runtime: tests/cuda/test_cuda_one_runtime.cpp.)
TEST(KokkosBackend, LeavesTheApplicationsPendingErrorAlone) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  // On a thread of its own: the runtime's last error is the thread's.
  std::thread([&] {
    const std::size_t n = (std::size_t(1) << 20) + 3;
    const std::vector<float> a = random_vector<float>(n);
    Context scalar(Backend::scalar);
    const float want_sum = sum<float>(scalar, a);
    const Extremum<float> want_max = max_element<float>(scalar, a);
    {
      Context ctx(Backend::kokkos);
      Buffer<float> da(ctx, n);
      da.upload(a.data(), n);
      ASSERT_EQ(cudaSetDevice(1 << 20), cudaErrorInvalidDevice);
      ASSERT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice);
      float got_sum = poison<float>();
      EXPECT_NO_THROW(got_sum = sum<float>(ctx, da.span()));
      EXPECT_TRUE(same_bits(got_sum, want_sum)) << got_sum << " against " << want_sum;
      EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice) << "after the sum";
      Extremum<float> got_max{poison<float>(), 0};
      EXPECT_NO_THROW(got_max = max_element<float>(ctx, da.span()));
      EXPECT_TRUE(same_bits(got_max.value, want_max.value));
      EXPECT_EQ(got_max.index, want_max.index);
      EXPECT_EQ(cudaPeekAtLastError(), cudaErrorInvalidDevice) << "after max_element";
    }
    EXPECT_EQ(cudaGetLastError(), cudaErrorInvalidDevice) << "after the context's destruction";
    EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  }).join();
}

// The per-thread default stream's handle has no context of its own (the driver answers with the
// thread's current one): a context on it, created on a thread without a context, starts Kokkos'
// instance in Kokkos' GPU's primary context, and runs there.
TEST(KokkosBackend, RunsOnThePerThreadDefaultStream) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  const ContextLife life =
      live_a_context(Backend::kokkos, {}, [](ContextOptions& o) { o.stream = static_cast<void*>(cudaStreamPerThread); });
  expect_thread_context_kept(life, {});
}

// On a machine of two GPUs, Kokkos on the first: a thread with the other GPU current keeps its
// context and device through everything a context does, while the context's memory and stream
// are on Kokkos' GPU; a thread with no context whose fallback device is the other GPU (whose
// context exists) keeps no context and that device.
TEST(KokkosBackend, KeepsTheThreadsGpuAndRunsOnItsOwn) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count < 2) GTEST_SKIP() << "needs 2 GPUs, this machine has " << count;
  const int other = count - 1;  // Kokkos takes the first GPU unless told otherwise
  CUcontext others = nullptr;
  const ContextLife life = live_a_context(Backend::kokkos, {}, [&](ContextOptions&) {
    if (cudaSetDevice(other) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed");
    others = current_context();
  });
  if (life.device == other) GTEST_SKIP() << "Kokkos runs on GPU " << other << ", the one this test makes current";
  expect_thread_context_kept(life, {others});
  EXPECT_EQ(life.device_after, std::vector<int>(context_steps().size(), other));

  const ContextLife none = live_a_context(Backend::kokkos, {}, [&](ContextOptions&) {
    if (cudaSetDevice(other) != cudaSuccess) throw std::runtime_error("cudaSetDevice failed");
    detail::cuda::driver_context_calls().set_current(nullptr);
  });
  expect_thread_context_kept(none, {});
  EXPECT_EQ(none.device_after, std::vector<int>(context_steps().size(), other));
}
#endif

}  // namespace
}  // namespace ew::test

// The cuda backend's own edges: host-resident operands through the transfer pipeline
// (pageable, pinned, device and managed in every combination, many chunks), a borrowed
// stream, device selection, out-of-memory, caller-allocated and misaligned pointers,
// 64-bit indexing, and the probe and the host copy team on machines without a driver.
#include <cuda_runtime.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <vector>

#include "address_space_limit.hpp"
#include "architectures.hpp"
#include "cuda_error.hpp"
#include "cuda_test_support.hpp"
#include "gpu_thread_context.hpp"
#include "kernels.hpp"
#include "memory.hpp"

int architecture_seen_by_a_kernel();  // architecture_seen.cu

// The n-th next host allocation of this thread fails, once (0: none): the caching
// allocator's bookkeeping without memory. The replacements (the array forms call them)
// pair malloc with free, which GCC cannot see from the calls it inlines.
namespace {
thread_local int failing_host_allocation = 0;
}
void* operator new(std::size_t bytes) {
  if (failing_host_allocation > 0 && --failing_host_allocation == 0) throw std::bad_alloc();
  if (void* p = std::malloc(bytes ? bytes : 1)) return p;
  throw std::bad_alloc();
}
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  try {
    return ::operator new(bytes);
  } catch (const std::bad_alloc&) {
    return nullptr;
  }
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
#pragma GCC diagnostic pop

namespace ew::test {
namespace {

bool cuda_runtime_sees_a_device() {
  int count = 0;
  const bool ok = cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
  cudaGetLastError();
  return ok;
}

// The copy team that stages pageable memory (runs in CI: no GPU involved). Segments
// start and end at every offset mod 16 and shares are large enough for streaming
// stores; bytes around each destination must stay untouched.
TEST(CudaCopyTeam, CopiesEverySegmentExactlyWithAndWithoutStreamingStores) {
  constexpr std::size_t kGuard = 64;
  auto& random = rng();
  for (const bool streaming : {true, false})
    for (const int threads : {1, 3, 4}) {
      ew::detail::cuda::CopyTeam team(threads, streaming);
      const std::size_t sizes[] = {(std::size_t(3) << 20) + 13, 1, 0, (std::size_t(1) << 20) + 7, 4095};
      std::vector<std::vector<unsigned char>> src, dst;
      std::vector<ew::detail::cuda::CopyTeam::Segment> segments;
      for (std::size_t k = 0; k < std::size(sizes); ++k) {
        const std::size_t src_off = random() % 16, dst_off = random() % 16;
        src.emplace_back(sizes[k] + src_off);
        for (auto& b : src.back()) b = static_cast<unsigned char>(random());
        dst.emplace_back(sizes[k] + dst_off + 2 * kGuard, 0xA5);
        segments.push_back({dst.back().data() + kGuard + dst_off, src.back().data() + src_off, sizes[k]});
      }
      team.copy(segments);
      for (std::size_t k = 0; k < segments.size(); ++k) {
        const auto* d = static_cast<const unsigned char*>(segments[k].dst);
        EXPECT_EQ(std::memcmp(d, segments[k].src, sizes[k]), 0)
            << "segment " << k << " (" << sizes[k] << " bytes), threads " << threads << ", streaming " << streaming;
        for (const unsigned char* g = dst[k].data(); g < d; ++g) ASSERT_EQ(*g, 0xA5) << "written before segment " << k;
        for (const unsigned char* g = d + sizes[k]; g < dst[k].data() + dst[k].size(); ++g)
          ASSERT_EQ(*g, 0xA5) << "written after segment " << k;
      }
    }
}

// A copy team that cannot start all its threads (here: the address space limited, so that
// no new thread gets its stack) stops the ones it started and throws ew::Error(out_of_memory);
// unwinding past them once hung the process. In a child process, with an alarm.
int copy_team_with_no_room_for_threads() {
  alarm(60);
  if (!limit_address_space_to_current_plus(std::size_t(64) << 20)) return 4;
  try {
    ew::detail::cuda::CopyTeam team(256);
  } catch (const Error& e) {
    const bool named = std::strstr(e.what(), "copy team could not start thread") != nullptr;
    return e.code() == Errc::out_of_memory && named ? 0 : 5;
  }
  return 6;  // every thread started: the limit did not bite
}

TEST(CudaCopyTeam, AThreadThatCannotStartIsAnError) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's own allocations need the address space this test takes away";
#else
  EXPECT_EXIT(std::_Exit(copy_team_with_no_room_for_threads()), ::testing::ExitedWithCode(0), "");
#endif
}

// The caching allocator (runs in CI: host memory stands in for the device's) when the host
// has no memory for its records: allocate throws out_of_memory holding nothing, deallocate
// (noexcept: it runs in destructors) frees the block instead of caching it, and a cached
// block stays cached. Every block is freed once, and none twice.
int device_blocks = 0, device_frees = 0;
cudaError_t fake_alloc(void** p, std::size_t bytes) {
  *p = std::malloc(bytes);
  ++device_blocks;
  return *p ? cudaSuccess : cudaErrorMemoryAllocation;
}
cudaError_t fake_free(void* p) {
  std::free(p);
  ++device_frees;
  return cudaSuccess;
}

TEST(CudaCachingAllocator, NoHostMemoryForItsRecordsLosesNoBlock) {
  device_blocks = device_frees = 0;
  {
    detail::cuda::CachingAllocator pool(fake_alloc, fake_free, "test memory");
    void* a = pool.allocate(1000);
    failing_host_allocation = 1;
    pool.deallocate(a);  // no room to cache it: freed
    EXPECT_EQ(failing_host_allocation, 0) << "the allocator took no host memory to cache the block";
    EXPECT_EQ(device_frees, 1);

    failing_host_allocation = 1;
    try {
      (void)pool.allocate(1000);  // a new block, no room to record it: freed, out_of_memory
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), Errc::out_of_memory);
      EXPECT_NE(std::string(e.what()).find("no host memory"), std::string::npos) << e.what();
    }
    EXPECT_EQ(device_blocks, 2);
    EXPECT_EQ(device_frees, 2);

    void* b = pool.allocate(1000);
    pool.deallocate(b);  // cached
    failing_host_allocation = 1;
    EXPECT_THROW((void)pool.allocate(1000), Error);  // the cached block, no room to record it: stays cached
    void* c = pool.allocate(1000);
    EXPECT_EQ(c, b) << "the cached block was lost";
    EXPECT_EQ(device_blocks, 3);
    pool.deallocate(c);
  }
  EXPECT_EQ(device_frees, device_blocks);
}

// The errors after which CUDA is unusable in the process are device_fatal, the rest
// device_error or out_of_memory (driver_types.h: "the process must be terminated").
TEST(CudaErrors, ProcessFatalErrorsAreDeviceFatal) {
  auto code_of = [](cudaError_t e) {
    try {
      detail::cuda::throw_error(e, "a call");
    } catch (const Error& error) {
      return error.code();
    }
    return Errc::internal;
  };
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorContained, cudaErrorTensorMemoryLeak,
                        cudaErrorMpsClientTerminated, cudaErrorExternalDevice})
    EXPECT_EQ(code_of(e), Errc::device_fatal) << cudaGetErrorName(e);
  EXPECT_EQ(code_of(cudaErrorMemoryAllocation), Errc::out_of_memory);
  EXPECT_EQ(code_of(cudaErrorInvalidValue), Errc::device_error);
}

// Runs in CI (label cpu): there cudaGetDeviceCount fails, and cuda must say so. On a GPU
// the probe names the code the driver runs, or, for a build with no code for device 0
// (bench/cuda/architecture_check.sh builds one), says so and leaves cuda unusable.
TEST(CudaProbe, ReportsWhyWhenNoDeviceIsUsable) {
  BackendStatus s = backend_status(Backend::cuda);
  EXPECT_TRUE(s.compiled);
  int arch = 0;
  if (cuda_runtime_sees_a_device() && detail::cuda::kernel_architecture(arch) == cudaSuccess) {
    EXPECT_TRUE(s.usable) << s.reason;
    EXPECT_NE(s.detail.find("sm_"), std::string::npos) << s.detail;
    EXPECT_NE(s.detail.find(", kernels as sm_" + std::to_string(arch)), std::string::npos) << s.detail;
    return;
  }
  EXPECT_FALSE(s.usable);
  EXPECT_FALSE(s.reason.empty());
  EXPECT_NE(s.reason.find(cuda_runtime_sees_a_device() ? "has no kernel code that runs on sm_" : "cudaGetDeviceCount"),
            std::string::npos)
      << s.reason;
  if (!std::getenv("EW_BACKEND")) {
    EXPECT_NE(resolve_backend(), Backend::cuda);  // the automatic choice passes it over
  }
  try {
    Context ctx(Backend::cuda);
    ADD_FAILURE() << "a cuda context was created without a usable device";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable) << e.what();
    EXPECT_NE(std::string(e.what()).find(s.reason), std::string::npos) << e.what();
  }
}

// The probe's reading of CMAKE_CUDA_ARCHITECTURES (no GPU needed): which code a GPU runs.
TEST(CudaArchitectures, WhichCodeAGpuRuns) {
  using detail::cuda::architecture_run_on;
  const std::string deflt = "80-real 90-real 100-real 100-virtual";
  EXPECT_EQ(architecture_run_on(deflt, 9, 0), 90);   // its own code
  EXPECT_EQ(architecture_run_on(deflt, 8, 6), 80);   // sm_80 code on a later minor version
  EXPECT_EQ(architecture_run_on(deflt, 8, 9), 80);
  EXPECT_EQ(architecture_run_on(deflt, 10, 3), 100);
  EXPECT_EQ(architecture_run_on(deflt, 12, 0), 100);  // compute_100 PTX compiled by the driver
  EXPECT_EQ(architecture_run_on(deflt, 7, 5), 0);     // older than any code
  EXPECT_EQ(architecture_run_on("100-real", 9, 0), 0);
  EXPECT_EQ(architecture_run_on("80", 9, 0), 80);     // a plain number holds its PTX too
  EXPECT_EQ(architecture_run_on("80-real", 9, 0), 0);
  EXPECT_EQ(architecture_run_on("90-virtual", 8, 0), 0);
  EXPECT_EQ(architecture_run_on("80;90", 9, 0), 90);  // CMake's own separator
  EXPECT_EQ(architecture_run_on("86-real 80-virtual", 8, 0), 80);
  EXPECT_EQ(architecture_run_on("90a-real", 9, 0), 90);
  EXPECT_EQ(architecture_run_on("90a", 10, 0), 0);    // an "a" architecture's code runs there alone
  EXPECT_EQ(architecture_run_on("100f-virtual", 10, 3), 100);
  EXPECT_EQ(architecture_run_on("100f-virtual", 12, 0), 0);
  for (const char* unreadable : {"native", "all", "all-major", "90-sass", ""})
    EXPECT_EQ(architecture_run_on(unreadable, 9, 0), std::string(unreadable).empty() ? 0 : -1) << unreadable;
}

class Cuda : public NeedsCuda {};

constexpr MemorySpace spaces[] = {MemorySpace::host, MemorySpace::pinned, MemorySpace::device};

TEST_F(Cuda, PipelineEverySpaceCombinationManyChunks) {
  Context ctx(Backend::cuda, small_staging());
  const std::size_t n = 50'001;
  for (Op op : {Op::add, Op::triad, Op::scale, Op::axpy, Op::axpby})
    for (MemorySpace sa : spaces)
      for (MemorySpace sb : spaces)
        for (MemorySpace so : spaces) {
          if (info(op).input_streams == 1 && sb != MemorySpace::host) continue;
          check_spaces<float>(ctx, op, n, sa, sb, so, offset_sets[2]);
          check_spaces<double>(ctx, op, n, sa, sb, so, offset_sets[1]);
        }
}

TEST_F(Cuda, PipelineWithDefaultStagingAcrossSeveralChunks) {
  Context ctx(Backend::cuda);
  const std::size_t n = (std::size_t(1) << 24) + 5;  // 64 MiB per array: several chunks of each kind
  check_spaces<float>(ctx, Op::add, n, MemorySpace::host, MemorySpace::host, MemorySpace::host);
  check_spaces<float>(ctx, Op::add, n, MemorySpace::pinned, MemorySpace::pinned, MemorySpace::pinned);
  check_spaces<double>(ctx, Op::axpy, n, MemorySpace::host, MemorySpace::host, MemorySpace::host);
}

TEST_F(Cuda, PipelineExactAliasingOnHostMemory) {
  Context ctx(Backend::cuda, small_staging());
  const std::size_t n = 30'011;
  for (MemorySpace where : {MemorySpace::host, MemorySpace::pinned}) {
    std::vector<double> x = random_vector<double>(n), want(n);
    reference(Op::add, n, x.data(), x.data(), want.data(), 0.0, 0.0);
    Storage<double> d(ctx, where, n);
    d.fill(x);
    Span<double> span(d.data(), n);
    add<double>(ctx, span, span, span);  // c = c + c, one array
    ctx.synchronize();
    EXPECT_EQ(first_mismatch(d.read(), want), -1) << to_string(where);
  }
}

TEST_F(Cuda, ManagedMemoryAtEveryOffset) {
  Context ctx(Backend::cuda);
  for (int o = 0; o < offset_set_count; ++o)
    for (Op op : {Op::copy, Op::add, Op::axpby}) {
      check_spaces<float>(ctx, op, 100'003, MemorySpace::managed, MemorySpace::managed, MemorySpace::managed,
                          offset_sets[o]);
      check_spaces<double>(ctx, op, 1'003, MemorySpace::managed, MemorySpace::device, MemorySpace::managed,
                           offset_sets[o]);
    }
}

// kernel_architecture, which the backend launches its kernels by, names the code that runs
// on the context's GPU (a kernel of this test, built for the same architectures, reports
// its __CUDA_ARCH__). That the launches follow it is what the rest of the suite checks in a
// build without code for the GPU (bench/cuda/architecture_check.sh: CMAKE_CUDA_ARCHITECTURES=80
// on an H100, whose compute_80 code has no bulk copies and no wait for the previous grid).
TEST_F(Cuda, KernelArchitectureIsTheCodeThatRuns) {
  Context ctx(Backend::cuda);
  int previous = 0, arch = 0;
  ASSERT_EQ(cudaGetDevice(&previous), cudaSuccess);
  ASSERT_EQ(cudaSetDevice(ctx.device()), cudaSuccess);
  const cudaError_t e = detail::cuda::kernel_architecture(arch);
  const int seen = architecture_seen_by_a_kernel();
  cudaSetDevice(previous);
  ASSERT_EQ(e, cudaSuccess);
  EXPECT_EQ(arch * 10, seen);
  std::printf("[ INFO     ] this build's kernels run as compute_%d on device %d\n", arch, ctx.device());
}

// From 2^20 16-byte vectors on, sm_90+ runs the bulk-copy kernel when the operands share
// the output's alignment (and the build has sm_90+ code), the vector kernel otherwise: every op in f32 and f64 gives the
// scalar bits, guards untouched.
TEST_F(Cuda, LargeArraysThroughTheBulkAndVectorKernels) {
  Context ctx(Backend::cuda);
  const std::size_t n = (std::size_t(1) << 22) + 4099;  // f32: 2^20 vectors and more; f64: 2^21
  for (const OpInfo& oi : op_table)
    for (int o = 0; o < offset_set_count; ++o) {
      expect_matches_reference<float>(ctx, oi.op, n, offset_sets[o]);
      expect_matches_reference<double>(ctx, oi.op, n, offset_sets[o]);
    }
}

TEST_F(Cuda, BorrowedStreamOrdersWithCallerWork) {
  cudaStream_t user = nullptr;
  ASSERT_EQ(cudaStreamCreateWithFlags(&user, cudaStreamNonBlocking), cudaSuccess);
  {
    ContextOptions o;
    o.stream = user;
    Context ctx(Backend::cuda, o);
    EXPECT_EQ(ctx.native_stream(), static_cast<void*>(user));
    const std::size_t n = 1 << 20;
    std::vector<float> x = random_vector<float>(n), want(n), got(n);
    reference<float>(Op::scale, n, x.data(), nullptr, want.data(), 3.0f, 0.0f);
    Buffer<float> dx(ctx, n), dy(ctx, n);
    // The caller's copy and the op are ordered by the stream alone.
    ASSERT_EQ(cudaMemcpyAsync(dx.data(), x.data(), n * sizeof(float), cudaMemcpyHostToDevice, user), cudaSuccess);
    scale<float>(ctx, 3.0f, dx, dy);
    ASSERT_EQ(cudaMemcpyAsync(got.data(), dy.data(), n * sizeof(float), cudaMemcpyDeviceToHost, user), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(user), cudaSuccess);
    EXPECT_EQ(first_mismatch(got, want), -1);
  }
  // The context did not destroy the caller's stream.
  EXPECT_EQ(cudaStreamSynchronize(user), cudaSuccess);
  EXPECT_EQ(cudaStreamDestroy(user), cudaSuccess);
}

TEST_F(Cuda, DeviceSelection) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ContextOptions o;
  o.device = count;
  expect_error(Errc::invalid_argument, [&] { Context ctx(Backend::cuda, o); }, "ContextOptions::device");
  {
    ScopedEnv env("EW_DEVICE", std::to_string(count).c_str());
    expect_error(Errc::invalid_argument, [] { Context ctx(Backend::cuda); }, "EW_DEVICE");
  }
  for (const char* bad : {"first", "4294967296", "-1"}) {
    ScopedEnv env("EW_DEVICE", bad);
    expect_error(Errc::invalid_argument, [] { Context ctx(Backend::cuda); }, "EW_DEVICE");
  }
  {
    ScopedEnv env("EW_DEVICE", std::to_string(count - 1).c_str());
    Context ctx(Backend::cuda);
    EXPECT_EQ(ctx.device(), count - 1);
    check_spaces<float>(ctx, Op::add, 1000, MemorySpace::device, MemorySpace::device, MemorySpace::device);
  }
  // The library leaves the application's current device as it found it.
  int current = -1;
  ASSERT_EQ(cudaGetDevice(&current), cudaSuccess);
  EXPECT_EQ(current, 0);
}

// A thread that has not used CUDA has no context, and a context's whole life leaves it none:
// giving such a thread "its" device 0 back through cudaSetDevice made a context on GPU 0 (since
// CUDA 12) in every process whose GPU is not 0. With two GPUs or more the context runs on the
// last one, and GPU 0 gets no context from it; the device the runtime reports stays 0.
TEST_F(Cuda, LeavesAThreadWithoutAContextWithNone) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  ContextOptions o;
  o.device = count - 1;
  const bool gpu0_had_a_context = detail::cuda::primary_context_active(0);
  const ContextLife life = live_a_context(Backend::cuda, o, [](ContextOptions&) {});
  expect_thread_context_kept(life, {});
  EXPECT_EQ(life.device, count - 1);
  EXPECT_EQ(life.device_after, std::vector<int>(context_steps().size(), 0));
  if (count > 1 && !gpu0_had_a_context)
    EXPECT_FALSE(detail::cuda::primary_context_active(0)) << "a context on GPU 0, which the process never used";
  else
    std::printf("[ INFO     ] GPU 0's context not checked: %s\n",
                count > 1 ? "the process had one before the test" : "one GPU, the context's own");
}

// A context the application made itself (driver API) stays current through every call, and the
// library's work goes to the GPU's primary context, not into the application's.
TEST_F(Cuda, KeepsTheApplicationsOwnContext) {
  CUcontext mine = nullptr;
  const ContextLife life = live_a_context(Backend::cuda, {}, [&](ContextOptions&) { mine = create_own_context(); });
  expect_thread_context_kept(life, {mine});
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(test_driver_calls().ctx_destroy(mine), CUDA_SUCCESS);
}

// A stream borrowed from a context the application made itself, on a thread that then has no
// context current: the calls run in the stream's context (its memory too), not in whatever the
// thread has, and the thread keeps none.
TEST_F(Cuda, RunsInABorrowedStreamsOwnContext) {
  CUcontext mine = nullptr;
  cudaStream_t stream = nullptr;
  const ContextLife life = live_a_context(Backend::cuda, {}, [&](ContextOptions& o) {
    mine = create_own_context();
    if (cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking) != cudaSuccess)
      throw std::runtime_error("cudaStreamCreate failed");
    CUcontext popped = nullptr;
    detail::cuda::driver_context_calls().pop_current(&popped);
    o.stream = stream;
  });
  expect_thread_context_kept(life, {}, mine);
  ASSERT_NE(mine, nullptr);
  EXPECT_EQ(test_driver_calls().ctx_destroy(mine), CUDA_SUCCESS);  // its stream with it
}

// The per-thread default stream has no context of its own: the calls run in the GPU's primary
// context, and a thread without a context keeps none.
TEST_F(Cuda, RunsOnThePerThreadDefaultStream) {
  const ContextLife life =
      live_a_context(Backend::cuda, {}, [](ContextOptions& o) { o.stream = static_cast<void*>(cudaStreamPerThread); });
  expect_thread_context_kept(life, {});
}

TEST_F(Cuda, BorrowedStreamMustMatchAnExplicitDevice) {
  int count = 0;
  ASSERT_EQ(cudaGetDeviceCount(&count), cudaSuccess);
  cudaStream_t user = nullptr;
  ASSERT_EQ(cudaStreamCreate(&user), cudaSuccess);
  ContextOptions o;
  o.stream = user;
  o.device = count;  // never the stream's device
  expect_error(Errc::invalid_argument, [&] { Context ctx(Backend::cuda, o); }, "ContextOptions::stream");
  EXPECT_EQ(cudaStreamDestroy(user), cudaSuccess);
}

TEST_F(Cuda, OutOfMemoryLeavesTheContextUsable) {
  Context ctx(Backend::cuda);
  const std::size_t pebibyte = std::size_t(1) << 50;
  expect_error(Errc::out_of_memory, [&] { Buffer<float> huge(ctx, pebibyte / sizeof(float)); },
               "cudaErrorMemoryAllocation");
  expect_error(Errc::out_of_memory, [&] { Buffer<float> huge(ctx, pebibyte / sizeof(float), MemorySpace::pinned); });
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  check_spaces<float>(ctx, Op::triad, 4097, MemorySpace::device, MemorySpace::device, MemorySpace::device);
  ContextOptions o;
  o.staging_bytes = 100;
  expect_error(Errc::invalid_argument, [&] { Context small(Backend::cuda, o); }, "staging_bytes");
  // "No limit" is refused too: the expression path's scratch of staging_bytes plus its
  // regions' rounding once wrapped to a few KiB, and its chunks ran past it.
  o.staging_bytes = SIZE_MAX;
  expect_error(Errc::invalid_argument, [&] { Context huge(Backend::cuda, o); }, "staging_bytes");
  o.staging_bytes = std::size_t(1) << 40;
  Context largest(Backend::cuda, o);  // allocates nothing until a pageable operand needs it
}

TEST_F(Cuda, SteadyStateBuffersComeFromThePool) {
  Context ctx(Backend::cuda);
  const void* first = nullptr;
  for (int i = 0; i < 5; ++i) {
    Buffer<double> b(ctx, 123'457);
    if (i == 0) first = b.data();
    EXPECT_EQ(static_cast<const void*>(b.data()), first) << "iteration " << i;
  }
}

// A pinned or managed block goes back to the pool only after the work reading it: the next
// Buffer that takes it is written by the host at once, while an op queued on the released
// one (a pinned pipeline; a kernel on managed memory) would still be reading it. The host
// writes from the end back, towards the op's reads from the front, so that the two meet.
TEST_F(Cuda, PinnedAndManagedBlocksAreReusedOnlyAfterTheirReaders) {
  Context ctx(Backend::cuda);
  const std::size_t n = std::size_t(1) << 26;  // 256 MiB
  for (MemorySpace space : {MemorySpace::pinned, MemorySpace::managed}) {
    Buffer<float> out(ctx, n);
    const void* released = nullptr;
    {
      Buffer<float> a(ctx, n, space);
      std::fill(a.data(), a.data() + n, 1.0f);
      ew::scale<float>(ctx, 2.0f, a.span(), out.span());  // queued; `a` is released right after
      released = a.data();
    }
    Buffer<float> b(ctx, n, space);
    EXPECT_EQ(static_cast<const void*>(b.data()), released) << "the same block, from the pool";
    std::fill(std::make_reverse_iterator(b.data() + n), std::make_reverse_iterator(b.data()), -5.0f);
    ctx.synchronize();
    std::vector<float> got(n);
    out.download(got.data(), n);
    const auto wrong = std::count_if(got.begin(), got.end(), [](float v) { return v != 2.0f; });
    EXPECT_EQ(wrong, 0) << to_string(space) << ": the op read the next Buffer's values";
  }
}

// Memory the caller allocated with CUDA directly: classified per pointer, at offsets
// that make no two operands agree mod 16 bytes.
TEST_F(Cuda, CallerAllocatedPointersAtAnyOffset) {
  Context ctx(Backend::cuda);
  const std::size_t n = 77'777, total = n + 8;
  float *dev = nullptr, *pinned = nullptr, *managed = nullptr;
  ASSERT_EQ(cudaMalloc(&dev, total * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocHost(&pinned, total * sizeof(float)), cudaSuccess);
  ASSERT_EQ(cudaMallocManaged(&managed, total * sizeof(float)), cudaSuccess);
  std::vector<float> a = random_vector<float>(total), b = random_vector<float>(total), want(total, poison<float>());
  ASSERT_EQ(cudaMemcpy(dev, a.data(), total * sizeof(float), cudaMemcpyDefault), cudaSuccess);
  std::copy(b.begin(), b.end(), pinned);
  std::copy(want.begin(), want.end(), managed);
  reference(Op::mul, n, a.data() + 3, b.data() + 1, want.data() + 2, 0.0f, 0.0f);
  mul<float>(ctx, Span<const float>(dev + 3, n), Span<const float>(pinned + 1, n), Span<float>(managed + 2, n));
  ctx.synchronize();
  std::vector<float> got(managed, managed + total);
  EXPECT_EQ(first_mismatch(got, want), -1);
  cudaFree(dev);
  cudaFreeHost(pinned);
  cudaFree(managed);

  // A float pointer one byte off is rejected before anything runs.
  Buffer<float> buf(ctx, 64);
  auto* odd = reinterpret_cast<float*>(reinterpret_cast<char*>(buf.data()) + 1);
  expect_error(Errc::misaligned, [&] { copy<float>(ctx, Span<const float>(odd, 8), Span<float>(buf.data() + 16, 8)); });
}

// More than 2^31 elements: indices past the 32-bit range land where they should.
TEST_F(Cuda, SixtyFourBitIndexing) {
  Context ctx(Backend::cuda);
  std::size_t free_bytes = 0, total_bytes = 0;
  ASSERT_EQ(cudaMemGetInfo(&free_bytes, &total_bytes), cudaSuccess);
  const std::size_t n = (std::size_t(1) << 31) + 19;
  if (free_bytes < 2 * (n + 8) * sizeof(float) + (std::size_t(1) << 30)) GTEST_SKIP() << "needs 17 GiB of free device memory";
  Buffer<float> x(ctx, n + 8), y(ctx, n + 8);
  // On the context's stream: it does not wait for the legacy default stream.
  auto stream = static_cast<cudaStream_t>(ctx.native_stream());
  ASSERT_EQ(cudaMemsetAsync(x.data(), 0x3f, (n + 8) * sizeof(float), stream), cudaSuccess);  // every x = 0x3f3f3f3f
  ASSERT_EQ(cudaMemsetAsync(y.data(), 0xff, (n + 8) * sizeof(float), stream), cudaSuccess);  // NaN: never written
  scale<float>(ctx, 2.0f, Span<const float>(x.data() + 1, n), Span<float>(y.data() + 3, n));
  ctx.synchronize();
  float x0;
  std::memcpy(&x0, std::vector<unsigned char>(4, 0x3f).data(), 4);
  for (std::size_t i : {std::size_t(0), std::size_t(1) << 31, n - 1, (std::size_t(1) << 32) / 2 + 7}) {
    float v = 0;
    ASSERT_EQ(cudaMemcpy(&v, y.data() + 3 + i, sizeof v, cudaMemcpyDeviceToHost), cudaSuccess);
    EXPECT_EQ(v, 2.0f * x0) << "element " << i;
  }
  float guard = 0;
  ASSERT_EQ(cudaMemcpy(&guard, y.data() + 3 + n, sizeof guard, cudaMemcpyDeviceToHost), cudaSuccess);
  EXPECT_TRUE(std::isnan(guard));
}

}  // namespace
}  // namespace ew::test

// Expressions on a GPU (label gpu; the random-expression suite itself is tests/expr, whose
// cuda/* cases run there too): operands in every memory space through the staging path,
// the memory and disk caches with their timings, two processes compiling the same
// expression at once, a missing NVRTC. Skips with the reason where cuda is unusable.
#include <filesystem>
#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <random>
#include <string>

#include "cuda_test_support.hpp"
#include "expr.hpp"
#include "expr_cache.hpp"
#include "expr_launch_tuning.hpp"
#include "ew/ew.hpp"
#include "ew_internal/program.hpp"

extern char** environ;

namespace ew::test {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int device_arch() {
  int major = 0, minor = 0;
  cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
  cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0);
  return major * 10 + minor;
}

// An expression no earlier run has compiled: its constant is new (the disk cache misses).
Kernel fresh_kernel() {
  std::random_device seed;
  const float c = 1.0f + static_cast<float>(seed() % 1000000) * 1e-7f;
  return compile({input<float>(0) * sigmoid(input<float>(0)) + Expr(c)});
}

class CudaExpr : public NeedsCuda {};

// x * sigmoid(x) with its operands in every memory space (pageable and pinned ones
// staged through 4 KiB of device scratch, so many chunks), bit for bit against scalar.
TEST_F(CudaExpr, EveryMemorySpaceSameBitsAsScalar) {
  ContextOptions o;
  o.staging_bytes = 4096;
  Context gpu(Backend::cuda, o), scalar(Backend::scalar);
  const Kernel k = compile({input<float>(0) * sigmoid(input<float>(0)), cast<double>(input<float>(0)) * param<double>(0)});
  for (std::size_t n : {std::size_t(1), std::size_t(1000), std::size_t(100003)}) {
    std::vector<float> x = random_vector<float>(n), want0(n, poison<float>());
    std::vector<double> want1(n, poison<double>());
    k(scalar, {x}, {want0, want1}, {0.75});
    for (MemorySpace in : {MemorySpace::host, MemorySpace::pinned, MemorySpace::device, MemorySpace::managed})
      for (MemorySpace out : {MemorySpace::host, MemorySpace::device}) {
        Storage<float> sx(gpu, in, n), so0(gpu, out, n);
        Storage<double> so1(gpu, MemorySpace::host, n);
        sx.fill(x), so0.fill(std::vector<float>(n, poison<float>())), so1.fill(std::vector<double>(n, poison<double>()));
        k(gpu, {Span<const float>(sx.data(), n)}, {Span<float>(so0.data(), n), Span<double>(so1.data(), n)}, {0.75});
        gpu.synchronize();
        const std::vector<float> got0 = so0.read();
        const std::vector<double> got1 = so1.read();
        for (std::size_t i = 0; i < n; ++i) {
          ASSERT_TRUE(same_bits(got0[i], want0[i])) << "n=" << n << " in " << to_string(in) << " out " << to_string(out)
                                                    << " element " << i << ": " << got0[i] << " vs " << want0[i];
          ASSERT_TRUE(same_bits(got1[i], want1[i])) << "n=" << n << " element " << i;
        }
      }
  }
}

// Past 2^20 groups on sm_90+ the bulk-copy kernel runs (aligned operands); at an offset
// the vector kernel of the any-alignment case. Both bit for bit against scalar, mixed
// dtypes, two outputs, one of them in place over its input.
TEST_F(CudaExpr, LargeArraysBothKernelsSameBitsAsScalar) {
  Context gpu(Backend::cuda), scalar(Backend::scalar);
  const Expr x = input<float>(0), y = input<double>(1);
  const Kernel k = compile({x * sigmoid(x), cast<double>(x) * y - param<double>(0)});
  const std::size_t n = (std::size_t(1) << 22) + 5;
  for (std::size_t offset : {std::size_t(0), std::size_t(1)}) {
    std::vector<float> hx = random_vector<float>(n + offset), want0(n);
    std::vector<double> hy = random_vector<double>(n + offset), want1(n);
    k(scalar, {Span<const float>(hx.data() + offset, n), Span<const double>(hy.data() + offset, n)}, {want0, want1},
      {0.25});
    Buffer<float> dx(gpu, n + offset), d0(gpu, n + offset);
    Buffer<double> dy(gpu, n + offset);
    dx.upload(hx.data(), n + offset), dy.upload(hy.data(), n + offset);
    std::vector<float> poisoned(n + offset, poison<float>());
    d0.upload(poisoned.data(), n + offset);
    const Span<double> y_in_place(dy.data() + offset, n, dy.space());
    k(gpu, {Span<const float>(dx.data() + offset, n, dx.space()), y_in_place},
      {Span<float>(d0.data() + offset, n, d0.space()), y_in_place}, {0.25});
    std::vector<float> got0(n + offset);
    std::vector<double> got1(n + offset);
    d0.download(got0.data(), n + offset), dy.download(got1.data(), n + offset);
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(same_bits(got0[offset + i], want0[i])) << "offset " << offset << " element " << i;
      ASSERT_TRUE(same_bits(got1[offset + i], want1[i])) << "offset " << offset << " element " << i;
    }
    if (offset) {
      ASSERT_TRUE(is_poison(got0[0])) << "written before the output";
    }
  }
}

// Every launch tuning gives the same bits: the vector kernel, and the bulk-copy kernel forced
// at every size (tiles from one group to past the array, the last one short) with targets
// from below the default to an SM's shared memory; poisoned outputs, sizes across the tile
// edges, two inputs with params (clamp) and one double (silu).
TEST_F(CudaExpr, EveryLaunchTuningSameBitsAsScalar) {
  namespace tune = ew::detail::cuda;
  struct Reset {
    ~Reset() { tune::set_expr_launch_tuning({}); }
  } reset;
  Context gpu(Backend::cuda), scalar(Backend::scalar);
  const Expr a = input<float>(0), b = input<float>(1), x = input<double>(0);
  const Kernel clamp = compile({min(max(param<float>(0) * a + b, param<float>(1)), param<float>(2))});
  const Kernel silu = compile({x * sigmoid(x)});
  const std::size_t kib = 1024;
  const tune::ExprLaunchTuning tunings[] = {{0, 0},        {-1, 0},        {1, 0},         {1, 16 * kib},
                                            {1, 69 * kib}, {1, 96 * kib}, {1, 228 * kib}};
  for (std::size_t n :
       {std::size_t(1), std::size_t(5), std::size_t(1000), std::size_t(65537), (std::size_t(1) << 20) + 3}) {
    const std::vector<float> ha = random_vector<float>(n), hb = random_vector<float>(n);
    const std::vector<double> hx = random_vector<double>(n);
    std::vector<float> want_clamp(n, poison<float>());
    std::vector<double> want_silu(n, poison<double>());
    clamp(scalar, {ha, hb}, {want_clamp}, {0.75, -0.5, 0.5});
    silu(scalar, {hx}, {want_silu});
    Buffer<float> da(gpu, n), db(gpu, n), dy(gpu, n);
    Buffer<double> dx(gpu, n), dz(gpu, n);
    da.upload(ha.data(), n), db.upload(hb.data(), n), dx.upload(hx.data(), n);
    for (const tune::ExprLaunchTuning& t : tunings) {
      tune::set_expr_launch_tuning(t);
      const std::vector<float> pf(n, poison<float>());
      const std::vector<double> pd(n, poison<double>());
      dy.upload(pf.data(), n), dz.upload(pd.data(), n);
      clamp(gpu, {Span<const float>(da.data(), n, da.space()), Span<const float>(db.data(), n, db.space())}, {dy.span()},
            {0.75, -0.5, 0.5});
      silu(gpu, {Span<const double>(dx.data(), n, dx.space())}, {dz.span()});
      std::vector<float> got_clamp(n);
      std::vector<double> got_silu(n);
      dy.download(got_clamp.data(), n), dz.download(got_silu.data(), n);
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(same_bits(got_clamp[i], want_clamp[i]))
            << "clamp, n=" << n << " bulk " << t.bulk << " target " << t.bulk_bytes_in_flight_per_sm << " element " << i;
        ASSERT_TRUE(same_bits(got_silu[i], want_silu[i]))
            << "silu, n=" << n << " bulk " << t.bulk << " target " << t.bulk_bytes_in_flight_per_sm << " element " << i;
      }
    }
  }
}

// First compile, disk-cache hit, in-memory hit; a corrupt file is recompiled. Prints
// the times (the targets: first compile < 300 ms, disk hit < 10 ms).
TEST_F(CudaExpr, CacheMissHitAndCorruptFileWithTimings) {
  char dir[] = "/tmp/ew_cuda_expr_cache.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  setenv("EW_CACHE_DIR", dir, 1);
  Context gpu(Backend::cuda);
  const Kernel k = fresh_kernel();
  const int arch = device_arch();
  using detail::cuda::ExprSource;
  ExprSource source{};
  Clock::time_point t = Clock::now();
  auto first = detail::cuda::load_expr_kernel(k.program(), true, arch, &source);
  const double compile_ms = ms_since(t);
  EXPECT_EQ(source, ExprSource::compiled);
  t = Clock::now();
  auto second = detail::cuda::load_expr_kernel(k.program(), true, arch, &source);
  const double disk_ms = ms_since(t);
  EXPECT_EQ(source, ExprSource::disk);
  detail::cuda::expr_kernel(k.program(), true, arch, &source);
  t = Clock::now();
  detail::cuda::expr_kernel(k.program(), true, arch, &source);
  const double memory_ms = ms_since(t);
  EXPECT_EQ(source, ExprSource::memory);
  // Corrupt every file of the directory: the next load compiles again and rewrites it.
  ASSERT_EQ(std::system(("for f in " + std::string(dir) + "/*.cubin; do printf garbage > \"$f\"; done").c_str()), 0);
  detail::cuda::load_expr_kernel(k.program(), true, arch, &source);
  EXPECT_EQ(source, ExprSource::compiled);
  detail::cuda::load_expr_kernel(k.program(), true, arch, &source);
  EXPECT_EQ(source, ExprSource::disk);
  std::printf("sm_%d: first compile %.1f ms, disk-cache hit %.2f ms, memory hit %.4f ms\n", arch, compile_ms, disk_ms,
              memory_ms);
  EXPECT_LT(disk_ms, compile_ms);

  // The kernels work: the call through the context gives the scalar bits.
  const std::size_t n = 4099;
  std::vector<float> x = random_vector<float>(n), want(n, poison<float>()), got(n, poison<float>());
  Context scalar(Backend::scalar);
  k(scalar, {x}, {want});
  Buffer<float> dx(gpu, n), dout(gpu, n);
  dx.upload(x.data(), n);
  k(gpu, {dx.span()}, {dout.span()});
  dout.download(got.data(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bits(got[i], want[i])) << i;
  unsetenv("EW_CACHE_DIR");
  std::filesystem::remove_all(dir);
}

// Per-call cost of a cached expression equal to add against ew::add, 2^10 elements,
// device memory, back to back (printed; the target is within 0.2 us).
TEST_F(CudaExpr, CallCostAgainstTheFixedOp) {
  Context gpu(Backend::cuda);
  const std::size_t n = 1024;
  Buffer<float> a(gpu, n), b(gpu, n), c(gpu, n);
  const Kernel add = compile({input<float>(0) + input<float>(1)});
  add(gpu, {a.span(), b.span()}, {c.span()});
  gpu.synchronize();
  const int calls = 20000;
  double best_expr = 1e30, best_op = 1e30;
  for (int round = 0; round < 5; ++round) {
    Clock::time_point t = Clock::now();
    for (int k = 0; k < calls; ++k) ew::add<float>(gpu, a.span(), b.span(), c.span());
    gpu.synchronize();
    best_op = std::min(best_op, ms_since(t) * 1000 / calls);
    t = Clock::now();
    for (int k = 0; k < calls; ++k) add(gpu, {a.span(), b.span()}, {c.span()});
    gpu.synchronize();
    best_expr = std::min(best_expr, ms_since(t) * 1000 / calls);
  }
  std::printf("2^10 floats, back to back: ew::add %.3f us a call, the expression a+b %.3f us (%+.3f us)\n", best_op,
              best_expr, best_expr - best_op);
  EXPECT_LT(best_expr, best_op + 2.0) << "an expression call costs far more than the fixed op";
}

// Run by CudaExpr.TwoProcessesCompileAtOnce in two child processes at once.
TEST(CudaExprChild, CompileAndCheck) {
  const char* constant = std::getenv("EW_EXPR_CHILD_CONSTANT");
  if (!constant) GTEST_SKIP() << "a child of CudaExpr.TwoProcessesCompileAtOnce";
  Context gpu(Backend::cuda), scalar(Backend::scalar);
  const Kernel k = compile({tanh(input<double>(0)) * Expr(std::atof(constant))});
  const std::size_t n = 10000;
  std::vector<double> x = random_vector<double>(n), want(n), got(n);
  k(scalar, {x}, {want});
  Buffer<double> dx(gpu, n), dout(gpu, n);
  dx.upload(x.data(), n);
  k(gpu, {dx.span()}, {dout.span()});
  dout.download(got.data(), n);
  for (std::size_t i = 0; i < n; ++i) ASSERT_TRUE(same_bits(got[i], want[i])) << i;
}

TEST_F(CudaExpr, TwoProcessesCompileAtOnce) {
  char dir[] = "/tmp/ew_cuda_expr_two.XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  char self[4096] = {};
  ASSERT_GT(readlink("/proc/self/exe", self, sizeof self - 1), 0);
  std::random_device seed;
  const std::string constant = std::to_string(1.0 + (seed() % 1000000) * 1e-7);
  const std::string env_dir = std::string("EW_CACHE_DIR=") + dir, env_constant = "EW_EXPR_CHILD_CONSTANT=" + constant;
  std::vector<std::string> env_strings = {env_dir, env_constant};
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "EW_CACHE_DIR=", 13) != 0) env_strings.push_back(*e);
  std::vector<char*> envp;
  for (std::string& s : env_strings) envp.push_back(&s[0]);
  envp.push_back(nullptr);
  std::string filter = "--gtest_filter=CudaExprChild.CompileAndCheck";
  char* argv[] = {self, &filter[0], nullptr};
  pid_t child[2];
  for (pid_t& c : child) ASSERT_EQ(posix_spawn(&c, self, nullptr, nullptr, argv, envp.data()), 0);
  for (pid_t c : child) {
    int status = 0;
    waitpid(c, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "a child failed";
  }
  // One valid file per alignment case that ran, no temporary left.
  EXPECT_EQ(std::system(("ls " + std::string(dir) + "/*.cubin >/dev/null").c_str()), 0);
  EXPECT_NE(std::system(("ls " + std::string(dir) + "/*.tmp.* >/dev/null 2>&1").c_str()), 0);
  std::filesystem::remove_all(dir);
}

// Run by ctest with EW_NVRTC=/nonexistent/libnvrtc.so.13 (CudaExprNoNvrtc in CMakeLists).
TEST(CudaExprNoNvrtc, ClearErrorAndNoFallback) {
  const char* nvrtc = std::getenv("EW_NVRTC");
  if (!nvrtc || std::string(nvrtc).find("/nonexistent/") == std::string::npos)
    GTEST_SKIP() << "run with EW_NVRTC=/nonexistent/libnvrtc.so.13 (ctest does)";
  EW_SKIP_IF_UNUSABLE(Backend::cuda);
  Context gpu(Backend::cuda);
  Buffer<float> x(gpu, 16);
  const Kernel k = compile({input<float>(0) + 1});
  try {
    k(gpu, {x.span()}, {x.span()});
    FAIL() << "an expression ran without NVRTC";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::backend_unavailable);
    const std::string m = e.what();
    EXPECT_NE(m.find("NVRTC"), std::string::npos) << m;
    EXPECT_NE(m.find(nvrtc), std::string::npos) << m;
  }
  // The fixed ops still run.
  ew::scale<float>(gpu, 2.0f, x.span(), x.span());
  gpu.synchronize();
}

}  // namespace
}  // namespace ew::test

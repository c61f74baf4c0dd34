// A Kokkos launch that fails is reported as an Error naming the work (out_of_memory here),
// its output left as it was, and the context works on once the cause is gone. Kokkos returns no status
// from a launch; the backend reads it from its CUDA runtime's last error (check_launches in
// on_device, backends/kokkos/backend.cpp).
//
// A launch is made to fail by starving it of local memory (gpu_starved_launches.hpp). Which
// kernels have a frame depends on the build and the walk the GPU takes (on an H200: the queued
// tile walk of doubles, silu at 2^22, and the 16-bit ops); where none of these calls' has one,
// the test skips and says so.
#include <Kokkos_Core.hpp>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "test_support.hpp"

#ifdef KOKKOS_ENABLE_CUDA
#include "gpu_starved_launches.hpp"
#endif

namespace ew::test {
namespace {

#ifdef KOKKOS_ENABLE_CUDA
// Buffers of any element type, alive as long as the test.
class Buffers {
 public:
  explicit Buffers(Context& ctx) : ctx_(ctx) {}
  template <class T>
  Buffer<T>* make(std::size_t n) {
    auto b = std::make_shared<Buffer<T>>(ctx_, n);
    held_.push_back(b);
    return b.get();
  }

 private:
  Context& ctx_;
  std::vector<std::shared_ptr<void>> held_;
};

// One call of the library on the context's GPU; `mismatch` compares its output with the scalar
// backend's result or with the poison it was filled with.
struct Call {
  std::string name;
  const char* what;  // the work its error must name
  std::function<void()> run, poison;
  std::function<long long(bool poisoned)> mismatch;  // first element unlike the one expected, or -1
};

template <class T>
Call call(std::string name, const char* what, std::function<void()> run, Buffer<T>* out, std::vector<T> want) {
  const auto contents = [out] {
    std::vector<T> v(out->size());
    out->download(v.data(), v.size());
    return v;
  };
  const std::vector<T> poisoned(want.size(), poison<T>());
  return {std::move(name), what, std::move(run), [out, poisoned] { out->upload(poisoned.data(), poisoned.size()); },
          [contents, want = std::move(want), poisoned](bool p) {
            return first_mismatch(contents(), p ? poisoned : want);
          }};
}

TEST(KokkosFailedLaunch, IsReportedAndWritesNothing) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  Context ctx(Backend::kokkos), scalar(Backend::scalar);
  const Expr x = input<double>(0);
  const Kernel silu = compile({x * sigmoid(x)});
  Buffers buffers(ctx);
  std::vector<Call> calls;
  // Below and above 2^21 doubles the expression takes different walks on some GPUs.
  for (const int log_n : {20, 22}) {
    const std::size_t n = (std::size_t(1) << log_n) + 3;
    const std::vector<double> a = random_vector<double>(n);
    Buffer<double>*da = buffers.make<double>(n), *out = buffers.make<double>(n);
    da->upload(a.data(), n);
    std::vector<double> want(n, poison<double>());
    silu(scalar, {Span<const double>(a.data(), n)}, {Span<double>(want.data(), n)});
    calls.push_back(call<double>("silu f64, 2^" + std::to_string(log_n) + " + 3", "an expression's kernel",
                                 [&silu, &ctx, da, out] { silu(ctx, {da->span()}, {out->span()}); }, out, want));
  }
  // The 16-bit ops' kernels, and the 2^20 elements' walk, are where the others have no frame.
  const std::size_t n = (std::size_t(1) << 20) + 3;
  const std::vector<half> a = random_vector<half>(n), b = random_vector<half>(n);
  Buffer<half>*da = buffers.make<half>(n), *db = buffers.make<half>(n), *out = buffers.make<half>(n);
  da->upload(a.data(), n);
  db->upload(b.data(), n);
  std::vector<half> want(n, poison<half>());
  reference(Op::add, n, a.data(), b.data(), want.data(), 0.0f, 0.0f);
  calls.push_back(call<half>(
      "add f16, 2^20 + 3", "an op's kernel", [&ctx, da, db, out] { add<half>(ctx, *da, *db, *out); }, out, want));
  int starved = 0;
  for (Call& c : calls) {
    SCOPED_TRACE(c.name);
    c.run();  // every allocation Kokkos and the walk make lazily is made before the starving
    ctx.synchronize();
    ASSERT_EQ(c.mismatch(false), -1) << "before the launch was starved";
    c.poison();
    std::string error;
    {
      const StarvedLaunches starve;
      if (!starve.ready()) GTEST_SKIP() << "the stack limit could not be lowered, or no memory taken";
      try {
        c.run();
        ctx.synchronize();
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::out_of_memory) << e.what();  // the launch's local memory refused
        error = e.what();
      }
    }
    if (error.empty()) {  // it ran, or its failure went unreported
      const bool ran = c.mismatch(false) == -1;
      EXPECT_TRUE(ran) << "no error reported, and the output not written";
      if (!ran) ++starved;
      continue;
    }
    ++starved;
    std::printf("[ starved  ] %s: %s\n", c.name.c_str(), error.c_str());
    EXPECT_NE(error.find(c.what), std::string::npos) << error;
    EXPECT_EQ(c.mismatch(true), -1) << "the failed launch wrote its output";
    c.run();  // the cause gone, the context runs on
    ctx.synchronize();
    EXPECT_EQ(c.mismatch(false), -1) << "after the failure";
  }
  if (starved == 0) GTEST_SKIP() << "none of these calls' kernels needs local memory in this build: none was starved";
}
#else
TEST(KokkosFailedLaunch, IsReportedAndWritesNothing) { GTEST_SKIP() << "Kokkos runs on the host: no launches"; }
#endif

}  // namespace
}  // namespace ew::test

// A cuda launch that fails is reported as an Error (out_of_memory here), and no result is made
// of what it never computed, neither a value left by an earlier call nor one never written: the
// reductions' kernels (each has a stack frame, so they can be starved of local memory:
// gpu_starved_launches.hpp), the register and the staged kernel, their value to the host and
// into a device scalar. Once the cause is gone the context works on. Alone in its process and
// run serially: it takes the whole GPU's memory for a moment.
#include <cuda_runtime.h>

#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_test_support.hpp"
#include "gpu_starved_launches.hpp"

namespace ew::test {
namespace {

class CudaFailedLaunch : public NeedsCuda {};

// Each call runs first on other data (every lazy allocation made, and a result left behind
// that differs from the one expected), then starved.
TEST_F(CudaFailedLaunch, IsReportedAndMakesNoResult) {
  Context ctx(Backend::cuda), scalar(Backend::scalar);
  struct Call {
    std::string name;
    std::function<double(bool other)> run;  // the result, read on the host
    double want, want_other;
  };
  std::vector<Call> calls;
  std::vector<std::shared_ptr<void>> held;
  const auto buffer_of = [&](const auto& v) {
    using T = typename std::decay_t<decltype(v)>::value_type;
    auto b = std::make_shared<Buffer<T>>(ctx, v.size());
    b->upload(v.data(), v.size());
    held.push_back(b);
    return b.get();
  };
  // 2^20 floats take the register kernel, 2^24 the staged one (on an H200 and an H100).
  for (const int log_n : {20, 24}) {
    const std::size_t n = (std::size_t(1) << log_n) + 3;
    const std::vector<float> a = random_vector<float>(n), o = random_vector<float>(n);
    Buffer<float>*x = buffer_of(a), *other = buffer_of(o), *result = buffer_of(std::vector<float>(1));
    const double want = sum<float>(scalar, a), want_other = sum<float>(scalar, o);
    const std::string size = "2^" + std::to_string(log_n) + " + 3";
    calls.push_back({"sum f32, " + size + ", to the host",
                     [&ctx, x, other](bool o) { return double(sum<float>(ctx, (o ? other : x)->span())); }, want,
                     want_other});
    calls.push_back({"sum f32, " + size + ", into a device scalar",
                     [&ctx, x, other, result](bool o) {
                       const float poisoned = poison<float>();
                       result->upload(&poisoned, 1);
                       float got = 0;
                       try {
                         sum<float>(ctx, (o ? other : x)->span(), result->span());
                         ctx.synchronize();
                       } catch (...) {
                         result->download(&got, 1);
                         EXPECT_TRUE(is_poison(got)) << "the failed launch wrote the result";
                         throw;
                       }
                       result->download(&got, 1);
                       return double(got);
                     },
                     want, want_other});
  }
  const std::size_t n = (std::size_t(1) << 22) + 3;
  const std::vector<double> a = random_vector<double>(n), b = random_vector<double>(n), o = random_vector<double>(n);
  Buffer<double>*x = buffer_of(a), *y = buffer_of(b), *other = buffer_of(o);
  calls.push_back({"dot f64, 2^22 + 3, to the host",
                   [&ctx, x, y, other](bool o) { return dot<double>(ctx, (o ? other : x)->span(), y->span()); },
                   dot<double>(scalar, a, b), dot<double>(scalar, o, b)});
  int starved = 0;
  for (Call& c : calls) {
    SCOPED_TRACE(c.name);
    ASSERT_FALSE(same_bits(c.want, c.want_other));
    ASSERT_TRUE(same_bits(c.run(true), c.want_other)) << "before the launch was starved";
    std::string error;
    double got = poison<double>();
    {
      const StarvedLaunches starve;
      if (!starve.ready()) GTEST_SKIP() << "the stack limit could not be lowered, or no memory taken";
      try {
        got = c.run(false);
      } catch (const Error& e) {
        EXPECT_EQ(e.code(), Errc::out_of_memory) << e.what();  // the launch's local memory refused
        error = e.what();
      }
    }
    if (error.empty()) {  // it ran, or its failure went unreported
      const bool ran = same_bits(got, c.want);
      EXPECT_TRUE(ran) << "no error reported, and the result " << got << " is not " << c.want;
      if (!ran) ++starved;
      continue;
    }
    ++starved;
    std::printf("[ starved  ] %s: %s\n", c.name.c_str(), error.c_str());
    EXPECT_TRUE(same_bits(c.run(false), c.want)) << "after the failure";  // the cause gone, the context runs on
  }
  if (starved == 0) GTEST_SKIP() << "none of these calls' kernels needs local memory in this build: none was starved";
}

}  // namespace
}  // namespace ew::test

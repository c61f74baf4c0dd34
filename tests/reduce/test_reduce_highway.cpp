// The Highway reductions on every target this CPU supports (forced), with 1, 2, 3 and 8
// threads of the team and the threading threshold lowered so that every size below is
// cut into pieces: the same bits as the scalar backend whatever the pieces are (f32, f64,
// and 16-bit data through the vector widening of each target).
#include <hwy/targets.h>

#include <tuple>

#include "backend.hpp"
#include "reduce_support.hpp"
#include "team.hpp"

namespace ew::test {
namespace {

namespace hw = ew::detail::highway;

using Param = std::tuple<std::int64_t, int>;  // Highway target, threads

class ReduceHighway : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::highway);
    hwy::SetSupportedTargetsForTest(std::get<0>(GetParam()));
    saved_ = hw::parallel_threshold_bytes();
    hw::set_parallel_threshold_bytes(0);
  }
  void TearDown() override {
    hwy::SetSupportedTargetsForTest(0);
    hw::set_parallel_threshold_bytes(saved_);
    hw::set_f64_prefetch_bytes(saved_prefetch_);
  }
  std::size_t saved_ = 0;
  std::size_t saved_prefetch_ = hw::f64_prefetch_bytes();
};

template <class T>
void check(Context& ctx, Context& ref, std::size_t total) {
  const std::vector<T> x = cancelling_vector<T>(total + 4), y = random_vector<T>(total + 4);
  for (std::size_t n : {std::size_t(5), B - 3, B + 1, 5 * B + 3, 41 * B + 1, total})
    for (std::size_t off = 0; off < 4; ++off)
      for (Red r : all_reds) {
        const Span<const T> xs(x.data() + off, n), ys(y.data() + off, n);
        const Got<T> want = reduce<T>(ref, r, xs, ys), got = reduce<T>(ctx, r, xs, ys);
        ASSERT_TRUE(got == want) << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " offset " << off << ": "
                                 << show(got) << ", scalar " << show(want);
      }
}

TEST_P(ReduceHighway, SameBitsAsScalarOnEveryTargetAndThreadCount) {
  ContextOptions options;
  options.threads = std::get<1>(GetParam());
  Context ctx(Backend::highway, options);
  Context ref(Backend::scalar);
  check<float>(ctx, ref, 100003);
  check<double>(ctx, ref, 100003);
  check<half>(ctx, ref, 100003);
  check<bfloat16>(ctx, ref, 100003);
}

// f64 rows are prefetched only from inputs larger than the last-level cache: here from any
// input, so that the prefetching path gives its bits on every target at sizes a test affords.
// The threshold counts every input's bytes, and an input of exactly that size is not prefetched.
TEST_P(ReduceHighway, F64RowsPrefetchedGiveTheSameBits) {
  ContextOptions options;
  options.threads = std::get<1>(GetParam());
  Context ctx(Backend::highway, options);
  Context ref(Backend::scalar);
  hw::set_f64_prefetch_bytes(0);
  const std::size_t before = hw::prefetched_reductions();
  check<double>(ctx, ref, 100003);
  EXPECT_GT(hw::prefetched_reductions(), before);

  const std::vector<double> x = random_vector<double>(B), y = random_vector<double>(B);
  hw::set_f64_prefetch_bytes(B * sizeof(double));
  const auto prefetched_by = [&](auto call) {
    const std::size_t from = hw::prefetched_reductions();
    call();
    return hw::prefetched_reductions() - from;
  };
  EXPECT_EQ(prefetched_by([&] { sum<double>(ctx, Span<const double>(x.data(), B)); }), 0u);
  EXPECT_EQ(prefetched_by([&] { dot<double>(ctx, Span<const double>(x.data(), B), Span<const double>(y.data(), B)); }), 1u);
  hw::set_f64_prefetch_bytes(hw::last_level_cache());
  EXPECT_EQ(prefetched_by([&] { sum<double>(ctx, Span<const double>(x.data(), B)); }), 0u);
}

INSTANTIATE_TEST_SUITE_P(highway, ReduceHighway,
                         testing::Combine(testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                                          testing::Values(1, 2, 3, 8)),
                         [](const testing::TestParamInfo<Param>& p) {
                           return std::string(hwy::TargetName(std::get<0>(p.param))) + "_threads" +
                                  std::to_string(std::get<1>(p.param));
                         });

}  // namespace
}  // namespace ew::test

// The Highway backend on every target this CPU supports (forced with
// hwy::SetSupportedTargetsForTest), with 1, 2 and 3 threads, across the
// streaming-store and threading thresholds (lowered through the backend's tuning so
// that small arrays reach both paths), for every op, dtype and pointer offset.
#include <hwy/targets.h>

#include <limits>
#include <tuple>

#include "backend.hpp"
#include "kernels.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

namespace hw = ew::detail::highway;

// Small enough that the sizes below fall on both sides of each threshold.
constexpr std::size_t streaming_bytes = 4096;
constexpr std::size_t parallel_bytes = 256;
constexpr std::size_t sizes[] = {1, 15, 17, 63, 65, 1000, 1023, 1025, 4099, 100003};

using Param = std::tuple<std::int64_t, int>;  // Highway target, threads

class Targets : public testing::TestWithParam<Param> {
 protected:
  void SetUp() override {
    EW_SKIP_IF_UNUSABLE(Backend::highway);
    hwy::SetSupportedTargetsForTest(std::get<0>(GetParam()));
    hw::set_tuning({streaming_bytes, parallel_bytes});
  }
  void TearDown() override {
    hwy::SetSupportedTargetsForTest(0);
    hw::reset_tuning();
  }
};

TEST_P(Targets, ForcedTargetIsTheOneThatRuns) {
  EXPECT_STREQ(hw::chosen_target(), hwy::TargetName(std::get<0>(GetParam())));
}

template <class T>
void check_all(Context& ctx) {
  for (Op op : {Op::copy, Op::scale, Op::add, Op::mul, Op::triad, Op::axpy, Op::axpby})
    for (std::size_t n : sizes)
      for (const auto& off : offset_sets) {
        const std::size_t streamed_before = hw::streaming_calls();
        expect_matches_reference<T>(ctx, op, n, off);
        if (testing::Test::HasFailure()) return;
        // In-place outputs are read anyway: streaming would only evict them. 16-bit outputs
        // count at f32's size.
        const bool should_stream = n * sizeof(compute_t<T>) > streaming_bytes && !info(op).in_place;
        ASSERT_EQ(hw::streaming_calls() - streamed_before, should_stream ? 1u : 0u)
            << to_string(op) << " n=" << n << ": streaming stores " << (should_stream ? "not " : "")
            << "used";
      }
}

TEST_P(Targets, EveryOpMatchesReferenceBitForBit) {
  ContextOptions options;
  options.threads = std::get<1>(GetParam());
  Context ctx(Backend::highway, options);
  check_all<float>(ctx);
  check_all<double>(ctx);
  // 16-bit outputs stream by the same rule (output bytes over the threshold).
  check_all<half>(ctx);
  check_all<bfloat16>(ctx);
  // The reference check above must really have run on the forced target.
  EXPECT_STREQ(hw::chosen_target(), hwy::TargetName(std::get<0>(GetParam())));
}

// c = c + b over the streaming threshold: correct, and written with normal stores.
TEST_P(Targets, OutputThatIsAlsoAnInputIsNotStreamed) {
  ContextOptions options;
  options.threads = std::get<1>(GetParam());
  Context ctx(Backend::highway, options);
  const std::size_t n = 5003;
  std::vector<double> c = random_vector<double>(n), b = random_vector<double>(n), want(n);
  reference(Op::add, n, c.data(), b.data(), want.data(), 0.0, 0.0);
  const std::size_t streamed_before = hw::streaming_calls();
  add<double>(ctx, c, b, c);
  EXPECT_EQ(first_mismatch(c, want), -1);
  EXPECT_EQ(hw::streaming_calls(), streamed_before);
}

template <class T>
std::vector<T> special_values() {
  using L = std::numeric_limits<T>;
  std::vector<T> v = {L::quiet_NaN(), L::infinity(), -L::infinity(), L::denorm_min(), -L::denorm_min(),
                      L::min(), L::max(), -L::max(), T(0), -T(0), L::epsilon()};
  while (v.size() < 300) v.push_back(v[v.size() % 11] * T(v.size() % 3 ? 1 : -1));
  return v;
}

TEST_P(Targets, SpecialValuesGoThroughAsIeee) {
  ContextOptions options;
  options.threads = std::get<1>(GetParam());
  Context ctx(Backend::highway, options);
  const auto f = special_values<float>();
  const auto d = special_values<double>();
  for (Op op : {Op::copy, Op::scale, Op::add, Op::mul, Op::triad, Op::axpy, Op::axpby}) {
    expect_matches_reference<float>(ctx, op, f.size(), offset_sets[2], &f);
    expect_matches_reference<double>(ctx, op, d.size(), offset_sets[1], &d);
  }
}

std::string name(const testing::TestParamInfo<Param>& info) {
  return std::string(hwy::TargetName(std::get<0>(info.param))) + "_threads" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(highway, Targets,
                         testing::Combine(testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                                          testing::Values(1, 2, 3)),
                         name);

// Host, pinned and managed memory run; device memory is refused before anything runs.
TEST(HighwayMemory, AcceptsHostPinnedManagedRefusesDevice) {
  EW_SKIP_IF_UNUSABLE(Backend::highway);
  Context ctx(Backend::highway);
  std::vector<float> a = random_vector<float>(100), c(100, poison<float>());
  for (MemorySpace space : {MemorySpace::host, MemorySpace::pinned, MemorySpace::managed}) {
    copy<float>(ctx, Span<const float>(a.data(), a.size(), space), Span<float>(c.data(), c.size(), space));
    EXPECT_EQ(first_mismatch(c, a), -1) << to_string(space);
  }
  std::vector<float> untouched(100, poison<float>());
  try {
    copy<float>(ctx, Span<const float>(a.data(), a.size(), MemorySpace::device), Span<float>(untouched));
    FAIL() << "device memory accepted";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), Errc::foreign_memory);
  }
  for (float x : untouched) ASSERT_TRUE(is_poison(x));
}

TEST(HighwayProbe, ReportsTargetsChosenTargetAndThreads) {
  BackendStatus s = backend_status(Backend::highway);
  ASSERT_TRUE(s.usable) << s.reason;
  EXPECT_NE(s.detail.find("targets: "), std::string::npos) << s.detail;
  EXPECT_NE(s.detail.find(std::string("chosen: ") + hwy::TargetName(hwy::SupportedAndGeneratedTargets()[0])),
            std::string::npos)
      << s.detail;
  EXPECT_NE(s.detail.find("threads: "), std::string::npos) << s.detail;
}

}  // namespace
}  // namespace ew::test

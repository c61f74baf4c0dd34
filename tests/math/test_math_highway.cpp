// HighwayKit (backends/highway/math_kit-inl.h) against ScalarKit, bit for bit, for every
// function of ew/detail/math.hpp in float and double, on every Highway target compiled
// in and supported by this CPU (forced one by one), over special and random inputs.
// Targets without FMA are where a vector kit would drift (MulAdd is not fused there).

// Highway's per-target compilation of this file (foreach_target.h includes it again by name).
#undef HWY_TARGET_INCLUDE
#define HWY_TARGET_INCLUDE "test_math_highway.cpp"
#include "hwy/foreach_target.h"  // IWYU pragma: keep

#include "hwy/highway.h"
#include "math_kit-inl.h"
#include "math_test_support.hpp"

HWY_BEFORE_NAMESPACE();
namespace ew::test::math {
namespace HWY_NAMESPACE {

namespace hn = hwy::HWY_NAMESPACE;

template <class K>
typename K::V apply_vector(Fn f, typename K::V a, typename K::V b) {
  namespace m = ew::math::HWY_NAMESPACE;
  switch (f) {
    case Fn::exp: return m::exp<K>(a);
    case Fn::log: return m::log<K>(a);
    case Fn::tanh: return m::tanh<K>(a);
    case Fn::sigmoid: return m::sigmoid<K>(a);
    case Fn::round: return m::round<K>(a);
    case Fn::min: return m::min<K>(a, b);
    case Fn::max: return m::max<K>(a, b);
  }
  return a;
}

// out[i] = f(a[i], b[i]) a vector at a time; n is a multiple of every target's lane count.
template <class T>
void ApplyVectors(Fn f, const T* a, const T* b, T* out, std::size_t n) {
  const hn::ScalableTag<T> d;
  using K = ew::detail::highway::HWY_NAMESPACE::HighwayKit<hn::ScalableTag<T>>;
  for (std::size_t i = 0; i < n; i += hn::Lanes(d))
    hn::StoreU(apply_vector<K>(f, hn::LoadU(d, a + i), hn::LoadU(d, b + i)), d, out + i);
}

void ApplyF32(Fn f, const float* a, const float* b, float* out, std::size_t n) { ApplyVectors(f, a, b, out, n); }
void ApplyF64(Fn f, const double* a, const double* b, double* out, std::size_t n) {
  ApplyVectors(f, a, b, out, n);
}
std::int64_t CurrentTarget() { return HWY_TARGET; }

}  // namespace HWY_NAMESPACE
}  // namespace ew::test::math
HWY_AFTER_NAMESPACE();

#if HWY_ONCE
#include <gtest/gtest.h>
#include <hwy/targets.h>

#include <string>

namespace ew::test::math {

HWY_EXPORT(ApplyF32);
HWY_EXPORT(ApplyF64);
HWY_EXPORT(CurrentTarget);

namespace {

void apply_vectors(Fn f, const float* a, const float* b, float* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(ApplyF32)(f, a, b, out, n);
}
void apply_vectors(Fn f, const double* a, const double* b, double* out, std::size_t n) {
  HWY_DYNAMIC_DISPATCH(ApplyF64)(f, a, b, out, n);
}

class HighwayKitTargets : public testing::TestWithParam<std::int64_t> {
 protected:
  void SetUp() override { hwy::SetSupportedTargetsForTest(GetParam()); }
  void TearDown() override { hwy::SetSupportedTargetsForTest(0); }
};

TEST_P(HighwayKitTargets, ForcedTargetIsTheOneThatRuns) {
  EXPECT_EQ(HWY_DYNAMIC_DISPATCH(CurrentTarget)(), GetParam());
}

// Operands: every pair of special inputs, then random pairs; padded to whole vectors.
template <class T>
void operands(std::vector<T>& a, std::vector<T>& b) {
  const std::vector<T> specials = special_inputs<T>();
  for (T x : specials)
    for (T y : specials) a.push_back(x), b.push_back(y);
  const std::vector<T> ra = random_inputs<T>(200000, 21), rb = random_inputs<T>(200000, 22);
  a.insert(a.end(), ra.begin(), ra.end());
  b.insert(b.end(), rb.begin(), rb.end());
  // Values of ordinary size where each formula is in its working range.
  std::mt19937_64 rng(23);
  std::uniform_real_distribution<T> unit(T(-2), T(2)), wide(T(-800), T(800));
  for (int i = 0; i < 100000; ++i) a.push_back(unit(rng)), b.push_back(wide(rng));
  for (int i = 0; i < 100000; ++i) a.push_back(wide(rng)), b.push_back(unit(rng));
  while (a.size() % 64) a.push_back(T(1)), b.push_back(T(2));
}

template <class T>
void expect_same_bits_as_scalar(std::int64_t target) {
  std::vector<T> a, b;
  operands(a, b);
  std::vector<T> out(a.size());
  for (Fn f : {Fn::exp, Fn::log, Fn::tanh, Fn::sigmoid, Fn::round, Fn::min, Fn::max}) {
    std::fill(out.begin(), out.end(), from_bits<T>(Bits<T>(0x5a5a5a5a5a5a5a5aULL)));  // poison
    apply_vectors(f, a.data(), b.data(), out.data(), a.size());
    std::size_t mismatches = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const T expected = scalar(f, a[i], b[i]);
      if (bits(out[i]) == bits(expected)) continue;
      if (++mismatches <= 5)
        ADD_FAILURE() << name(f) << "(" << std::hexfloat << a[i] << ", " << b[i] << "): vector " << out[i]
                      << " (bits " << std::hex << bits(out[i]) << ") scalar " << std::hexfloat << expected
                      << " (bits " << std::hex << bits(expected) << ") on " << hwy::TargetName(target);
    }
    EXPECT_EQ(mismatches, 0u) << name(f) << " differs from the scalar kit in " << mismatches << " of "
                              << a.size() << " lanes";
  }
}

TEST_P(HighwayKitTargets, Float32SameBitsAsScalarKit) { expect_same_bits_as_scalar<float>(GetParam()); }
TEST_P(HighwayKitTargets, Float64SameBitsAsScalarKit) { expect_same_bits_as_scalar<double>(GetParam()); }

INSTANTIATE_TEST_SUITE_P(Math, HighwayKitTargets, testing::ValuesIn(hwy::SupportedAndGeneratedTargets()),
                         [](const testing::TestParamInfo<std::int64_t>& i) {
                           return std::string(hwy::TargetName(i.param));
                         });

}  // namespace
}  // namespace ew::test::math
#endif  // HWY_ONCE

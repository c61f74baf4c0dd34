// The shared suite: every backend x op x dtype x size x pointer offset, bit for bit
// against the scalar reference. Instantiated once per backend so that ctest can
// label the GPU ones; an unusable backend's cases are skipped with the reason.
#include <tuple>

#include "ew_internal/convert_eval.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t sizes[] = {0, 1, 3, 15, 16, 17, 63, 64, 65, 1000, (1u << 20) + 3};
constexpr Op ops[] = {Op::copy, Op::scale, Op::add, Op::mul, Op::triad, Op::axpy, Op::axpby};

using Param = std::tuple<Backend, Op, DType, std::size_t, int>;

class Ops : public testing::TestWithParam<Param> {};

TEST_P(Ops, MatchesScalarReferenceBitForBit) {
  // Plain variables, not a structured binding: C++17 lambdas cannot capture those.
  const Backend backend = std::get<0>(GetParam());
  const Op op = std::get<1>(GetParam());
  const DType dtype = std::get<2>(GetParam());
  const std::size_t n = std::get<3>(GetParam());
  const int offsets = std::get<4>(GetParam());
  EW_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  detail::dispatch_dtype(dtype, [&](auto tag) {
    expect_matches_reference<decltype(tag)>(ctx, op, n, offset_sets[offsets]);
  });
}

std::string name(const testing::TestParamInfo<Param>& info) {
  auto [backend, op, dtype, n, offsets] = info.param;
  (void)backend;
  return std::string(to_string(op)) + "_" + to_string(dtype) + "_n" + std::to_string(n) + "_off" +
         std::to_string(offsets);
}

#define EW_INSTANTIATE_FOR(backend)                                                                   \
  INSTANTIATE_TEST_SUITE_P(backend, Ops,                                                            \
                           testing::Combine(testing::Values(Backend::backend), testing::ValuesIn(ops), \
                                            testing::Values(DType::f32, DType::f64, DType::f16, DType::bf16), \
                                            testing::ValuesIn(sizes), testing::Range(0, offset_set_count)), \
                           name)
EW_INSTANTIATE_FOR(scalar);
EW_INSTANTIATE_FOR(highway);
EW_INSTANTIATE_FOR(kokkos);
EW_INSTANTIATE_FOR(cuda);

// In place: the output may be exactly an input; both inputs may be one array.
using AliasParam = std::tuple<Backend, Op, DType>;
class Aliasing : public testing::TestWithParam<AliasParam> {};

template <class T>
void check_aliasing(Context& ctx, Op op) {
  const bool two_inputs = info(op).input_streams == 2;
  const std::size_t n = 4099;
  for (int mode = 0; mode < (two_inputs ? 3 : 1); ++mode) {  // 0: out == a, 1: out == b, 2: a == b
    std::vector<T> x = random_vector<T>(n), y = random_vector<T>(n);
    const compute_t<T> s = random_scalar<compute_t<T>>(), t = random_scalar<compute_t<T>>();
    // For in-place ops, out == a makes y the same array as x.
    const T* ref_b = two_inputs ? (mode == 2 ? x.data() : y.data()) : (info(op).in_place ? x.data() : nullptr);
    std::vector<T> want(n);
    reference(op, n, x.data(), ref_b, want.data(), s, t);

    Buffer<T> dx(ctx, n), dy(ctx, n);
    dx.upload(x.data(), n);
    dy.upload(y.data(), n);
    Buffer<T>& out = mode == 0 ? dx : dy;
    Operands<T> args;
    args.a = dx.span();
    if (two_inputs) args.b = (mode == 2 ? dx : dy).span();
    args.out = out.span();
    args.s = s, args.t = t;
    run(ctx, op, args);
    ctx.synchronize();
    std::vector<T> got(n);
    out.download(got.data(), n);
    EXPECT_EQ(first_mismatch(got, want), -1) << to_string(op) << " aliasing mode " << mode;
  }
}

TEST_P(Aliasing, ExactAliasingIsInPlace) {
  const Backend backend = std::get<0>(GetParam());
  const Op op = std::get<1>(GetParam());
  const DType dtype = std::get<2>(GetParam());
  EW_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  detail::dispatch_dtype(dtype, [&](auto tag) { check_aliasing<decltype(tag)>(ctx, op); });
}

std::string alias_name(const testing::TestParamInfo<AliasParam>& info) {
  return std::string(to_string(std::get<1>(info.param))) + "_" + to_string(std::get<2>(info.param));
}

#define EW_INSTANTIATE_ALIASING_FOR(backend)                                                     \
  INSTANTIATE_TEST_SUITE_P(backend, Aliasing,                                                   \
                           testing::Combine(testing::Values(Backend::backend), testing::ValuesIn(ops), \
                                            testing::Values(DType::f32, DType::f64, DType::f16, DType::bf16)), \
                           alias_name)
EW_INSTANTIATE_ALIASING_FOR(scalar);
EW_INSTANTIATE_ALIASING_FOR(highway);
EW_INSTANTIATE_ALIASING_FOR(kokkos);
EW_INSTANTIATE_ALIASING_FOR(cuda);

// NaN, infinities, signed zeros and subnormals go through as IEEE arithmetic says.
class SpecialValues : public testing::TestWithParam<std::tuple<Backend, Op>> {};

template <class T>
std::vector<T> specials() {
  if constexpr (is_storage16_v<T>) {
    // NaN, ±inf, ±0, ±smallest subnormal, a subnormal, ±largest, smallest normal, ±1.
    const bool f16 = std::is_same_v<T, half>;
    const std::vector<std::uint16_t> bits =
        f16 ? std::vector<std::uint16_t>{0x7e00, 0x7c00, 0xfc00, 0, 0x8000, 0x0001, 0x8001, 0x0155, 0x7bff, 0xfbff,
                                         0x0400, 0x3c00, 0xbc00}
            : std::vector<std::uint16_t>{0x7fc0, 0x7f80, 0xff80, 0, 0x8000, 0x0001, 0x8001, 0x0035, 0x7f7f, 0xff7f,
                                         0x0080, 0x3f80, 0xbf80};
    std::vector<T> v;
    for (std::uint16_t b : bits) v.push_back(T::from_bits(b));
    return v;
  } else {
  using L = std::numeric_limits<T>;
  return {L::quiet_NaN(), L::infinity(), -L::infinity(), T(0), -T(0), L::denorm_min(), -L::denorm_min(),
          L::min() / T(3), L::max(), -L::max(), L::min(), T(1), T(-1)};
  }
}

TEST_P(SpecialValues, PassThroughAsIeee) {
  auto [backend, op] = GetParam();
  EW_SKIP_IF_UNUSABLE(backend);
  Context ctx(backend);
  const std::size_t zero[3] = {0, 0, 0}, odd[3] = {1, 2, 3};
  auto f = specials<float>();
  auto d = specials<double>();
  auto h = specials<half>();
  auto bf = specials<bfloat16>();
  for (std::size_t n : {std::size_t(13), std::size_t(77)}) {
    expect_matches_reference<float>(ctx, op, n, zero, &f);
    expect_matches_reference<double>(ctx, op, n, odd, &d);
    expect_matches_reference<half>(ctx, op, n, odd, &h);
    expect_matches_reference<bfloat16>(ctx, op, n, zero, &bf);
  }
}

std::string special_name(const testing::TestParamInfo<std::tuple<Backend, Op>>& info) {
  return to_string(std::get<1>(info.param));
}

#define EW_INSTANTIATE_SPECIALS_FOR(backend) \
  INSTANTIATE_TEST_SUITE_P(backend, SpecialValues, \
                           testing::Combine(testing::Values(Backend::backend), testing::ValuesIn(ops)), \
                           special_name)
EW_INSTANTIATE_SPECIALS_FOR(scalar);
EW_INSTANTIATE_SPECIALS_FOR(highway);
EW_INSTANTIATE_SPECIALS_FOR(kokkos);
EW_INSTANTIATE_SPECIALS_FOR(cuda);

}  // namespace
}  // namespace ew::test

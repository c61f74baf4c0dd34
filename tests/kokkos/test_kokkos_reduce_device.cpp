// The kokkos backend's reductions called directly (internals: backends/kokkos/reduce.hpp), bit
// for bit against the plan's reference (ew_internal/reduce_plan.hpp) computed here. On a GPU
// build of Kokkos the sums' grids are capped at 1 and 3 warps, so that each warp takes several
// blocks and several runs of 32 blocks in turn, which full-size grids do only past 2^29
// elements; min/max run on those grids (many elements a thread) and on full ones. Host spaces
// take the block walk, which is the plan's reference code itself (the public-API tests compare
// it with the scalar backend): skipped there.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <type_traits>
#include <vector>

#include "reduce.hpp"
#include "test_support.hpp"

namespace ew::test {
namespace {

namespace plan = detail::plan;

// The operands where the default execution space reads them (managed memory on Cuda).
template <class T>
struct Reachable {
#if defined(KOKKOS_ENABLE_CUDA)
  using Space = Kokkos::CudaUVMSpace;
#else
  using Space = Kokkos::HostSpace;
#endif
  Kokkos::View<T*, Space> view;
  explicit Reachable(const std::vector<T>& v) : view(Kokkos::view_alloc(Kokkos::WithoutInitializing, "ew test operand"), v.size()) {
    std::memcpy(view.data(), v.data(), v.size() * sizeof(T));
  }
};

// The kokkos backend's reduction of x[0..n) (and y[0..n)) on a grid of `warps` warps (0: full).
template <class T>
detail::ReduceResult reduce_on(plan::Kind kind, const T* x, const T* y, std::size_t n, std::int64_t warps,
                               detail::kokkos::ReduceScratch& scratch) {
  detail::ReduceCall c{};
  c.call = "test";
  c.kind = kind;
  c.dtype = dtype_v<T>;
  c.n = n;
  c.x = x;
  c.y = y;
  return detail::kokkos::run_reduce(Kokkos::DefaultExecutionSpace(), c, scratch, warps);
}

template <class T>
double reference(plan::Kind kind, const T* x, const T* y, std::size_t n) {
  const bool f64 = sizeof(T) == 8;
  const int w = plan::width(kind, f64);
  const std::size_t blocks = plan::block_count(n);
  std::vector<double> partials(blocks * w);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * plan::block_elements, count = std::min(plan::block_elements, n - begin);
    plan::reference_partials<T>(kind, x + begin, y + begin, count, partials.data() + b * w);
  }
  return plan::finish_partials(kind, f64, partials.data(), blocks);
}

// Arrays of n elements, by name: random; ties (values in 1/64 steps); NaNs (two, 256 elements
// apart: one thread of a one-warp grid meets both; 16-bit data with payloads, whose bits
// min/max keep) and infinities far into the array; subnormals of both signs; ascending and
// descending (a winner at either end); signed zeros (values >= 1 but +0 at 4 and -0 at 40,
// and the other way round: the first zero wins with its sign); every element +inf, or -inf
// (the worst value of min, of max: element 0 wins). The sums take the random, NaN and
// subnormal arrays (`sums`).
template <class T>
struct TestArray {
  const char* what;
  std::vector<T> data;
  bool sums;
};
template <class T>
std::vector<TestArray<T>> test_arrays(std::size_t n) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<T> random = random_vector<T>(n), ties = random, nans = random, tiny = random, up(n), down(n), zeros(n);
  std::vector<T> zeros_minus_first;
  for (T& v : ties) v = static_cast<T>(std::round(static_cast<double>(v) * 64) / 64);
  const std::size_t far = n / 3 * 2;
  nans[far] = nans[far + 256] = static_cast<T>(std::numeric_limits<double>::quiet_NaN());
  if constexpr (std::is_same_v<T, half>) nans[far] = half::from_bits(0xfd01), nans[far + 256] = half::from_bits(0x7e02);
  if constexpr (std::is_same_v<T, bfloat16>)
    nans[far] = bfloat16::from_bits(0xffa1), nans[far + 256] = bfloat16::from_bits(0x7fc2);
  nans[n / 2 + 9] = static_cast<T>(inf);
  nans[5] = static_cast<T>(-inf);
  // random_vector's magnitudes are below 2^9: scaled by 2^least, below the normal range (half's
  // from 2^-14, bfloat16's and float's from 2^-126, double's from 2^-1022), some flushed to zero.
  const int least = std::is_same_v<T, half> ? -27 : sizeof(T) == 8 ? -1035 : -139;
  for (T& v : tiny) v = static_cast<T>(std::ldexp(static_cast<double>(v), least));
  for (std::size_t i = 0; i < n; ++i) {
    up[i] = static_cast<T>(static_cast<double>(i) / 64);  // 16-bit data: ties where rounding meets
    down[i] = static_cast<T>(-static_cast<double>(i) / 64);
    zeros[i] = static_cast<T>(std::fabs(static_cast<double>(ties[i])) + 1);
  }
  zeros_minus_first = zeros;
  zeros[4] = static_cast<T>(0.0), zeros[40] = static_cast<T>(-0.0);
  zeros_minus_first[4] = static_cast<T>(-0.0), zeros_minus_first[40] = static_cast<T>(0.0);
  return {{"random", random, true},
          {"ties", ties, false},
          {"NaNs and infinities", nans, true},
          {"subnormals", tiny, true},
          {"ascending", up, false},
          {"descending", down, false},
          {"signed zeros, +0 first", zeros, false},
          {"signed zeros, -0 first", zeros_minus_first, false},
          {"+inf everywhere", std::vector<T>(n, static_cast<T>(inf)), false},
          {"-inf everywhere", std::vector<T>(n, static_cast<T>(-inf)), false}};
}

template <class T>
void sums_match_the_plan() {
  detail::kokkos::ReduceScratch scratch;
  const std::size_t largest = 70 * plan::block_elements + 3;
  const std::vector<T> ys = random_vector<T>(largest);
  const Reachable<T> y(ys);
  for (const TestArray<T>& one : test_arrays<T>(largest)) {
    if (!one.sums) continue;
    const Reachable<T> x(one.data);
    for (std::size_t off : {0, 1})  // the operands on and off 16-byte boundaries
      for (std::size_t n : {std::size_t(1), plan::block_elements - 1, 33 * plan::block_elements + 5,
                            40 * plan::block_elements, largest - 1})  // 40 blocks: both infinities, no NaN
        for (plan::Kind kind : {plan::Kind::sum, plan::Kind::asum, plan::Kind::dot, plan::Kind::norm2})
          for (std::int64_t warps : {1, 3}) {
            const T* const yd = kind == plan::Kind::dot ? y.view.data() + off : nullptr;
            const double got = reduce_on(kind, x.view.data() + off, yd, n, warps, scratch).value;
            const double want = reference(kind, one.data.data() + off, ys.data() + off, n);
            EXPECT_TRUE(same_bits(got, want)) << to_string(dtype_v<T>) << " kind " << static_cast<int>(kind) << " of "
                                              << one.what << " n " << n << " offset " << off << " warps " << warps
                                              << ": " << got << ", plan " << want;
          }
  }
}

// min/max against the plan's order over the whole array (reference_extremum), every array of
// test_arrays, at offsets 0, 1 and 3 (16-bit data: odd elements before the first 16-byte
// boundary) and on grids of 1, 3 and all warps (a full grid: at most a warp for every 32 loads,
// a load or two a thread at these sizes).
template <class T>
void extrema_match_the_plan() {
  detail::kokkos::ReduceScratch scratch;
  const std::size_t largest = 70 * plan::block_elements + 3;
  for (const TestArray<T>& one : test_arrays<T>(largest + 3)) {
    const Reachable<T> x(one.data);
    for (std::size_t off : {0, 1, 3})
      for (std::size_t n : {std::size_t(1), std::size_t(31), plan::block_elements - 1, 33 * plan::block_elements + 5,
                            largest})
        for (plan::Kind kind : {plan::Kind::min, plan::Kind::max})
          for (std::int64_t warps : {0, 1, 3}) {
            const detail::ReduceResult got = reduce_on<T>(kind, x.view.data() + off, nullptr, n, warps, scratch);
            double want = 0;
            std::uint64_t at = 0;
            plan::reference_extremum(kind == plan::Kind::min, one.data.data() + off, n, &want, &at);
            EXPECT_TRUE(same_bits(got.value, want) && got.index == at)
                << to_string(dtype_v<T>) << (kind == plan::Kind::min ? " min" : " max") << " of " << one.what << " n "
                << n << " offset " << off << " warps " << warps << ": " << got.value << " @" << got.index << ", plan "
                << want << " @" << at;
            if (::testing::Test::HasFailure()) return;
          }
  }
}

TEST(KokkosReduce, FewWarpsTakeBlocksAndRunsInTurn) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
#if !defined(KOKKOS_ENABLE_CUDA)
  GTEST_SKIP() << "the warps' kernels run on Cuda; this Kokkos has no Cuda space";
#endif
  const Context ctx(Backend::kokkos);  // Kokkos initialized by the library
  sums_match_the_plan<float>();
  sums_match_the_plan<double>();
  sums_match_the_plan<half>();  // widened by the hardware on the device
  sums_match_the_plan<bfloat16>();
}

TEST(KokkosReduce, ExtremaOnAnyGridAreThePlansWinner) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
#if !defined(KOKKOS_ENABLE_CUDA)
  GTEST_SKIP() << "the warps' kernels run on Cuda; this Kokkos has no Cuda space";
#endif
  const Context ctx(Backend::kokkos);
  extrema_match_the_plan<float>();
  extrema_match_the_plan<double>();
  extrema_match_the_plan<half>();
  extrema_match_the_plan<bfloat16>();
}

}  // namespace
}  // namespace ew::test


// The kokkos backend's reductions called directly (internals: backends/kokkos/reduce.hpp), bit
// for bit against the plan's reference (ew_internal/reduce_plan.hpp) computed here. On a GPU
// build of Kokkos the sums' grids are capped at 1 and 3 warps, so that each warp takes several
// blocks and several runs of 32 blocks in turn, which full-size grids do only past 2^29
// elements. Host spaces take the block walk, which is the plan's reference code itself (the
// public-API tests compare it with the scalar backend): skipped there.
#include <Kokkos_Core.hpp>

#include <algorithm>
#include <cstring>
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

template <class T>
double reference(plan::Kind kind, const std::vector<T>& x, const std::vector<T>& y, std::size_t n) {
  const bool f64 = sizeof(T) == 8;
  const int w = plan::width(kind, f64);
  const std::size_t blocks = plan::block_count(n);
  std::vector<double> partials(blocks * w);
  for (std::size_t b = 0; b < blocks; ++b) {
    const std::size_t begin = b * plan::block_elements, count = std::min(plan::block_elements, n - begin);
    plan::reference_partials<T>(kind, x.data() + begin, y.data() + begin, count, partials.data() + b * w);
  }
  return plan::finish_partials(kind, f64, partials.data(), blocks);
}

template <class T>
void sums_match_the_plan() {
  const Kokkos::DefaultExecutionSpace exec;
  detail::kokkos::ReduceScratch scratch;
  const std::size_t largest = 70 * plan::block_elements + 3;
  const std::vector<T> xs = random_vector<T>(largest), ys = random_vector<T>(largest);
  const Reachable<T> x(xs), y(ys);
  for (std::size_t n : {std::size_t(1), plan::block_elements - 1, 33 * plan::block_elements + 5, largest})
    for (plan::Kind kind : {plan::Kind::sum, plan::Kind::asum, plan::Kind::dot, plan::Kind::norm2})
      for (std::int64_t warps : {1, 3}) {
        detail::ReduceCall c{};
        c.call = "test";
        c.kind = kind;
        c.dtype = dtype_v<T>;
        c.n = n;
        c.x = x.view.data();
        c.y = kind == plan::Kind::dot ? y.view.data() : nullptr;
        const double got = detail::kokkos::run_reduce(exec, c, scratch, warps).value;
        const double want = reference<T>(kind, xs, ys, n);
        EXPECT_TRUE(same_bits(got, want)) << to_string(dtype_v<T>) << " kind " << static_cast<int>(kind) << " n " << n
                                          << " warps " << warps << ": " << got << ", plan " << want;
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
}

}  // namespace
}  // namespace ew::test


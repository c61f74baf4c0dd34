// The cuda reductions with every grid: CUDA blocks forced to own 1, 2, 8, 32 or 256 plan
// blocks (the size-based choice differs between GPUs) must give the same bits as the
// scalar backend. Labelled gpu (the cuda/ prefix); skipped with the reason without a GPU.
#include "reduce_support.hpp"

namespace ew::detail::cuda {
void set_reduce_blocks_per_cta(std::size_t blocks);  // backends/cuda/reduce.hpp
}

namespace ew::test {
namespace {

class ReduceGrid : public testing::TestWithParam<Backend> {
 protected:
  void SetUp() override { EW_SKIP_IF_UNUSABLE(GetParam()); }
  void TearDown() override { ew::detail::cuda::set_reduce_blocks_per_cta(0); }
};

template <class T>
void every_grid(Context& ctx, Context& ref) {
  const std::size_t total = 300 * B + 77;
  const std::vector<T> xs = cancelling_vector<T>(total), ys = random_vector<T>(total);
  Buffer<T> x(ctx, total), y(ctx, total);
  x.upload(xs.data(), total);
  y.upload(ys.data(), total);
  for (std::size_t per_cta : {1, 2, 8, 32, 256})
    for (std::size_t n : {B - 1, 9 * B + 1, total}) {
      ew::detail::cuda::set_reduce_blocks_per_cta(per_cta);
      for (Red r : all_reds) {
        const Got<T> want = reduce<T>(ref, r, Span<const T>(xs.data(), n), Span<const T>(ys.data(), n));
        const Got<T> got =
            reduce<T>(ctx, r, Span<const T>(x.data(), n, x.space()), Span<const T>(y.data(), n, y.space()));
        ASSERT_TRUE(got == want) << name(r) << " " << to_string(dtype_v<T>) << " n=" << n << " blocks per CUDA block "
                                 << per_cta << ": " << show(got) << ", scalar " << show(want);
      }
    }
}

TEST_P(ReduceGrid, EveryGridGivesTheSameBits) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  every_grid<float>(ctx, ref);
  every_grid<double>(ctx, ref);
}

// Pinned host memory is read by the kernel directly; managed memory too.
TEST_P(ReduceGrid, PinnedAndManagedOperands) {
  Context ctx(GetParam());
  Context ref(Backend::scalar);
  const std::size_t n = 7 * B + 3;
  const std::vector<double> xs = cancelling_vector<double>(n);
  for (MemorySpace space : {MemorySpace::pinned, MemorySpace::managed}) {
    Buffer<double> x(ctx, n, space);
    x.upload(xs.data(), n);
    for (Red r : all_reds) {
      const Got<double> want = reduce<double>(ref, r, Span<const double>(xs.data(), n), Span<const double>(xs.data(), n));
      const Got<double> got = reduce<double>(ctx, r, Span<const double>(x.data(), n, x.space()),
                                             Span<const double>(x.data(), n, x.space()));
      EXPECT_TRUE(got == want) << name(r) << " " << to_string(space) << ": " << show(got) << ", scalar " << show(want);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(cuda, ReduceGrid, testing::Values(Backend::cuda));

}  // namespace
}  // namespace ew::test

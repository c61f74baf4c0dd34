// Reductions over 2^31 + 5 floats (8 GiB, an anonymous MAP_NORESERVE mapping: untouched
// pages read as zeros and take no RAM) on every CPU backend, and on cuda from a copy in
// device memory where a GPU is usable: block counts and indices past 32 bits, the same bits
// as the scalar backend. A few minutes of reading: it runs
// only with EW_RUN_HUGE=1 (ctest -L huge on a machine with time to spare), not in CI.
#include <sys/mman.h>

#include <cstdio>
#include <cstdlib>
#include <memory>

#include "reduce_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t n = (std::size_t(1) << 31) + 5;

TEST(ReduceHugeIndex, BeyondTwoToThe31) {
  const char* run = std::getenv("EW_RUN_HUGE");
  if (!run || std::string(run) != "1") GTEST_SKIP() << "reads 8 GiB per call: set EW_RUN_HUGE=1 to run it";
  struct Mapping {
    void* p = mmap(nullptr, n * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ~Mapping() {
      if (p != MAP_FAILED) munmap(p, n * sizeof(float));
    }
  } mapping;
  ASSERT_NE(mapping.p, MAP_FAILED);
  float* x = static_cast<float*>(mapping.p);
  // Values on both sides of 2^31, in a few pages only; the extrema past 2^31.
  for (std::size_t i = 0; i < 4096; ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
  for (std::size_t i = n - 9000; i < n; ++i) x[i] = static_cast<float>(i % 13) * 0.5f;
  x[n - 2] = 1e6f;
  x[(std::size_t(1) << 31) + 1] = -1e6f;
  Context ref(Backend::scalar);
  const Span<const float> xs(x, n);
  const Got<float> want[] = {reduce<float>(ref, Red::sum, xs, xs), reduce<float>(ref, Red::min, xs, xs),
                             reduce<float>(ref, Red::max, xs, xs)};
  EXPECT_EQ(want[1].index, (std::size_t(1) << 31) + 1);
  EXPECT_EQ(want[2].index, n - 2);
  for (Backend b : {Backend::highway, Backend::kokkos, Backend::cuda}) {
    if (!backend_status(b).usable) continue;
    Context ctx(b);
    // A context on a GPU (cuda, kokkos on Cuda) reads a copy in device memory (8 GiB; a GPU
    // with less is said and passed over).
    std::unique_ptr<Buffer<float>> device;
    if (ctx.device() >= 0) {
      try {
        device = std::make_unique<Buffer<float>>(ctx, n, MemorySpace::device);
      } catch (const Error& e) {
        if (e.code() != Errc::out_of_memory) throw;
        std::printf("%s not run: %s\n", to_string(b), e.what());
        continue;
      }
      device->upload(x, n);
    }
    const Span<const float> in = device ? Span<const float>(device->data(), n, MemorySpace::device) : xs;
    int k = 0;
    for (Red r : {Red::sum, Red::min, Red::max}) {
      const Got<float> got = reduce<float>(ctx, r, in, in);
      EXPECT_TRUE(got == want[k]) << to_string(b) << " " << name(r) << ": " << show(got) << ", scalar " << show(want[k]);
      ++k;
    }
  }
}

}  // namespace
}  // namespace ew::test

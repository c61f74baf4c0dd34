// The Kokkos backend past 32-bit indices: in-place scale over 2^31 + 4 floats starting
// one element into an mmap'd MAP_NORESERVE region of 2^31 + 5 (so the output is
// misaligned and the head, vector body and tail all run). Only sentinels are set;
// everything else stays zero, so the pass costs one sweep over 8 GiB. A 32-bit index
// anywhere would leave the sentinels at and beyond 2^31 unscaled or scale the wrong
// elements. On a device execution space the region goes through a device buffer.
#include <sys/mman.h>
#include <unistd.h>

#include <map>

#include "test_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t total = (std::size_t(1) << 31) + 5;
constexpr std::size_t first = 1, n = total - first;
constexpr std::size_t two31 = std::size_t(1) << 31;
constexpr std::size_t required_ram = std::size_t(16) << 30;

std::size_t available_ram() {
  return static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

TEST(KokkosHugeIndex, InPlaceScaleBeyondTwoToThe31) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "8 GiB passes are too slow under AddressSanitizer; the plain build runs this";
#endif
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  if (available_ram() < required_ram)
    GTEST_SKIP() << "needs " << (required_ram >> 30) << " GiB of free RAM, " << (available_ram() >> 20) << " MiB available";
  void* mem = mmap(nullptr, total * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
  ASSERT_NE(mem, MAP_FAILED);
  float* region = static_cast<float*>(mem);
  float* x = region + first;

  // Sentinels (indices into x) near both ends and on both sides of 2^31.
  const std::size_t at[] = {0, 1, 2, 3, 4, 5, 17, two31 - 3, two31 - 2, two31 - 1, two31, two31 + 1, two31 + 2,
                            n - 3, n - 2, n - 1};
  std::map<std::size_t, float> sentinels;  // n - 3 is 2^31 + 1: one entry per index
  for (std::size_t k = 0; k < sizeof(at) / sizeof(at[0]); ++k) sentinels[at[k]] = 1.0f + 0.125f * float(k);
  for (auto [i, v] : sentinels) x[i] = v;
  region[0] = 7.0f;  // before the span: must stay

  Context ctx(Backend::kokkos);
  const float s = -3.0f;
  bool on_host = true;
  try {
    scale<float>(ctx, s, Span<const float>(x, n), Span<float>(x, n));
    ctx.synchronize();
  } catch (const Error& e) {
    if (e.code() != Errc::foreign_memory) throw;
    on_host = false;  // checked before anything ran: a device execution space
  }
  if (!on_host) {
    Buffer<float> d(ctx, total);
    d.upload(region, total);
    Span<float> dx(d.data() + first, n, d.space());
    scale<float>(ctx, s, Span<const float>(dx.data, n, d.space()), dx);
    ctx.synchronize();
    d.download(region, total);
  }

  EXPECT_EQ(region[0], 7.0f) << "the element before the span was written";
  for (auto [i, v] : sentinels) EXPECT_EQ(x[i], s * v) << "sentinel at index " << i;
  // Elements between the sentinels were zero and must be -0 now (s * +0 = -0 for s < 0):
  // a sample across the whole range, in steps that are not a power of two.
  std::size_t unwritten = 0;
  for (std::size_t i = 6; i < n; i += 99991)
    if (!same_bits(x[i], s * 0.0f) && x[i] == 0.0f) ++unwritten;
  EXPECT_EQ(unwritten, 0u) << "elements left +0: never written";
  munmap(mem, total * sizeof(float));
}

}  // namespace
}  // namespace ew::test

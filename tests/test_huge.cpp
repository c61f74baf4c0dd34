// Vectors longer than 2^31 elements: in-place scale over 2^31 + 5 floats (8 GiB) on
// every usable backend that reads host memory, one after another in one process.
// Memory comes from an anonymous MAP_NORESERVE mapping, so the test only needs the
// pages it touches; it is skipped, with the reason, where RAM is short.
#include <sys/mman.h>
#include <unistd.h>

#include "test_support.hpp"

namespace ew::test {
namespace {

constexpr std::size_t n = (std::size_t(1) << 31) + 5;

std::size_t available_ram() {
  return static_cast<std::size_t>(sysconf(_SC_AVPHYS_PAGES)) * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

// A value per index that differs across the 2^31 boundary, so a wrapped 32-bit index
// writes the wrong value in the wrong place.
float pattern(std::size_t i) { return static_cast<float>(i % 8191) * 0.25f + static_cast<float>(i >> 31) * 3000.0f; }

TEST(HugeIndex, InPlaceScaleBeyondTwoToThe31) {
#if defined(__SANITIZE_ADDRESS__)
  GTEST_SKIP() << "8 GiB passes are too slow under AddressSanitizer; the plain build runs this";
#endif
  if (available_ram() < (std::size_t(12) << 30))
    GTEST_SKIP() << "needs 12 GiB of free RAM, " << (available_ram() >> 20) << " MiB available";
  struct Mapping {
    void* p = mmap(nullptr, n * sizeof(float), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ~Mapping() {
      if (p != MAP_FAILED) munmap(p, n * sizeof(float));
    }
  } mapping;
  ASSERT_NE(mapping.p, MAP_FAILED);
  float* x = static_cast<float*>(mapping.p);
  const float s = 1.5f;
  int ran = 0;
  for (const BackendStatus& st : available_backends()) {
    if (!st.usable) continue;
    Context ctx(st.backend);
    for (std::size_t i = 0; i < n; ++i) x[i] = pattern(i);
    try {
      scale<float>(ctx, s, Span<const float>(x, n), Span<float>(x, n));
      ctx.synchronize();
    } catch (const Error& e) {
      if (e.code() == Errc::foreign_memory) continue;  // a device-only backend (Kokkos on CUDA)
      throw;
    }
    for (std::size_t i = 0; i < n; ++i)
      if (x[i] != s * pattern(i)) FAIL() << st.name << ": element " << i << " is " << x[i] << ", expected " << s * pattern(i);
    ++ran;
  }
  EXPECT_GE(ran, 1);
}

}  // namespace
}  // namespace ew::test

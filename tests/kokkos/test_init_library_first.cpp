// The library is used before anyone initialized Kokkos: the first contexts (created
// by several threads at once) initialize it exactly once, ew::finalize() finalizes it,
// and afterwards the backend reports itself unavailable instead of initializing again.
#include <atomic>
#include <thread>
#include <vector>

#include "init_support.hpp"

namespace ew::test {
namespace {

std::atomic<int> finalizations{0};

TEST(KokkosInitLibraryFirst, LazyInitializationOnceAndFinalizeThroughTheLibrary) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);  // the probe must not initialize Kokkos
  ASSERT_FALSE(Kokkos::is_initialized()) << "the probe initialized Kokkos";

  std::vector<std::thread> threads;
  std::atomic<int> created{0};
  for (int i = 0; i < 8; ++i)
    threads.emplace_back([&] {
      Context ctx(Backend::kokkos);
      ++created;
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(created, 8);
  ASSERT_TRUE(Kokkos::is_initialized());
  Kokkos::push_finalize_hook([] { ++finalizations; });
  expect_add_works();

#ifdef KOKKOS_ENABLE_CUDA
  // On a machine of two GPUs: finalize() gives the calling thread back its GPU, here not the
  // one Kokkos runs on (Kokkos sets its own as it tears its instances down).
  int count = 0, before = -1, after = -1;
  const bool two_gpus = cudaGetDeviceCount(&count) == cudaSuccess && count >= 2;
  if (two_gpus) {
    cudaSetDevice(count - 1);
    cudaGetDevice(&before);
  }
#endif
  finalize();
#ifdef KOKKOS_ENABLE_CUDA
  if (two_gpus) {
    cudaGetDevice(&after);
    EXPECT_EQ(after, before) << "the thread's GPU after ew::finalize()";
  }
#endif
  EXPECT_FALSE(Kokkos::is_initialized());
  EXPECT_EQ(finalizations, 1);
  EXPECT_EQ(error_code_of([] { Context ctx(Backend::kokkos); }), Errc::backend_unavailable);
  expect_reported_lost("ew::finalize() finalized");
  finalize();  // repeated: no second Kokkos::finalize
  EXPECT_EQ(finalizations, 1);
  // The other backends are unaffected.
  Context scalar(Backend::scalar);
}

}  // namespace
}  // namespace ew::test

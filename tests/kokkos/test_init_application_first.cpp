// The application initializes Kokkos before the library is used: the library must
// run on that Kokkos, leave it initialized through ew::finalize(), and report itself
// unavailable once the application has finalized Kokkos (no second initialize).
#include "init_support.hpp"

namespace ew::test {
namespace {

bool finalized_by_kokkos = false;

TEST(KokkosInitApplicationFirst, LibraryUsesAndNeverFinalizesTheApplicationsKokkos) {
  EW_SKIP_IF_UNUSABLE(Backend::kokkos);
  Kokkos::initialize();
  Kokkos::push_finalize_hook([] { finalized_by_kokkos = true; });
  expect_add_works();
  expect_add_works();  // a second context on the same Kokkos

  finalize();
  EXPECT_TRUE(Kokkos::is_initialized()) << "ew::finalize() finalized the application's Kokkos";
  EXPECT_FALSE(finalized_by_kokkos);
  expect_add_works();  // still usable: the library never owned Kokkos

  Kokkos::finalize();
  EXPECT_TRUE(finalized_by_kokkos);
  EXPECT_EQ(error_code_of([] { Context ctx(Backend::kokkos); }), Errc::backend_unavailable);
  expect_reported_lost("the application finalized Kokkos");
  finalize();  // nothing left to do, and no second Kokkos::finalize
}

}  // namespace
}  // namespace ew::test

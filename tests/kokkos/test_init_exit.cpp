// The library initializes Kokkos and the program ends without ew::finalize(): Kokkos
// must still be finalized (the finalize hook prints what ctest looks for).
#include <cstdio>

#include <Kokkos_Core.hpp>

#include "ew/ew.hpp"

int main() {
  if (!ew::backend_status(ew::Backend::kokkos).usable) {
    std::printf("skipped: %s\n", ew::backend_status(ew::Backend::kokkos).reason.c_str());
    return 77;
  }
  {
    ew::Context ctx(ew::Backend::kokkos);
    ew::Buffer<double> x(ctx, 1000), y(ctx, 1000);
    ew::copy<double>(ctx, x, y);
    ctx.synchronize();
  }
  if (!Kokkos::is_initialized()) return 1;
  Kokkos::push_finalize_hook([] {
    std::puts("Kokkos finalized at exit");
    std::fflush(stdout);
  });
  return 0;
}

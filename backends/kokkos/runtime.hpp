#pragma once
// Who owns Kokkos in this process. The rule: if the application initialized Kokkos,
// the library uses it and never finalizes it; otherwise the library initializes it
// once, at the first Kokkos context, and finalizes it at exit or in ew::finalize().
// Kokkos cannot be initialized twice in one process (4.x aborts), so after it was
// finalized, by anyone, the backend reports itself unavailable instead.
#include <string>

#include "ew/context.hpp"

namespace ew::detail::kokkos {

// Makes sure Kokkos is initialized; throws Error(backend_unavailable) when it was
// finalized. `options` (threads, device) matter only when the library initializes.
void acquire(const ContextOptions& options);

// Finalizes Kokkos if the library initialized it; any number of calls.
void release();

// Why Kokkos cannot be initialized again in this process (it was finalized), or empty.
std::string lost();

// True when the library, not the application, initialized Kokkos.
bool initialized_by_library();

// "Kokkos 3.4.1"
std::string version();

}  // namespace ew::detail::kokkos

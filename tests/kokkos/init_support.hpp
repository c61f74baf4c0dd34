#pragma once
// What the initialization-order tests share: one small op that must give the scalar
// reference's result, so "the backend works" means it computed, not only constructed.
#include <Kokkos_Core.hpp>

#include "test_support.hpp"

namespace ew::test {

inline void expect_add_works() {
  Context ctx(Backend::kokkos);
  const std::size_t offsets[3] = {0, 0, 0};
  expect_matches_reference<float>(ctx, Op::add, 10007, offsets);
}

template <class F>
Errc error_code_of(F&& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.code();
  }
  ADD_FAILURE() << "no ew::Error thrown";
  return Errc::internal;
}

// Once Kokkos is finalized, what the library reports says so (its probe ran before): the
// backend's status, the list, and an explicit request; the automatic choice passes it by.
inline void expect_reported_lost(const std::string& why) {
  const BackendStatus s = backend_status(Backend::kokkos);
  EXPECT_FALSE(s.usable);
  EXPECT_NE(s.reason.find(why), std::string::npos) << s.reason;
  for (const BackendStatus& listed : available_backends()) {
    if (listed.backend == Backend::kokkos) {
      EXPECT_FALSE(listed.usable);
    }
  }
  EXPECT_EQ(error_code_of([] { resolve_backend(Backend::kokkos); }), Errc::backend_unavailable);
  EXPECT_NE(resolve_backend(Backend::automatic), Backend::kokkos);
}

}  // namespace ew::test

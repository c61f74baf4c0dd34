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

}  // namespace ew::test

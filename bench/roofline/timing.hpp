#pragma once
// Host-clock timing for CPU work (steady_clock, monotonic).
#include <chrono>
#include <utility>

namespace ew::roofline {

template <class F>
double seconds_of(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  std::forward<F>(f)();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// Calls per timed batch so that one batch lasts about `target` seconds, given the
// time of one call; at least 1, at most `limit`.
inline long batch_for(double one_call_seconds, double target, long limit = 1L << 20) {
  if (one_call_seconds <= 0) return limit;
  double calls = target / one_call_seconds;
  return calls < 1 ? 1 : calls > double(limit) ? limit : static_cast<long>(calls);
}

}  // namespace ew::roofline

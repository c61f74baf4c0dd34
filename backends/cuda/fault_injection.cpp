// The state of the fault points (fault_injection.hpp), compiled only into the
// test-only library. Atomics: contexts on several threads may pass fault points at once.
#include "fault_injection.hpp"

#ifndef EW_FAULT_INJECTION
#error "fault_injection.cpp belongs to the test-only library (EW_FAULT_INJECTION)"
#endif

#include <atomic>

namespace ew::detail::cuda::fault {

namespace {
std::atomic<long> counts[kStepCount];
std::atomic<int> armed_step{-1};
std::atomic<long> armed_nth{0};
std::atomic<cudaError_t> armed_error{cudaSuccess};
std::atomic<bool> has_fired{false};
}  // namespace

void arm(Step step, long nth, cudaError_t error) {
  for (auto& c : counts) c = 0;
  has_fired = false;
  armed_error = error;
  armed_nth = nth;
  armed_step = nth > 0 ? static_cast<int>(step) : -1;
}

void disarm() { armed_step = -1; }

long calls(Step step) { return counts[static_cast<int>(step)]; }

bool fired() { return has_fired; }

cudaError_t next(Step step) {
  const long call = ++counts[static_cast<int>(step)];
  if (armed_step != static_cast<int>(step) || call != armed_nth) return cudaSuccess;
  has_fired = true;
  return armed_error;
}

}  // namespace ew::detail::cuda::fault

// CUDA failing in the middle of a call, through the fault points of the test-only
// library (backends/cuda/fault_injection.hpp): the k-th CUDA call of a step (staging or
// scratch allocation, a copy either way, a kernel launch, a wait, stream ordering)
// returns an error instead of running, for k = the first, a middle and the last call
// of that step in the op. Each case checks what docs/gpu.md promises:
// - the call raises ew::Error(out_of_memory) for an allocation, device_error for the
//   rest, and its message names the failing step;
// - no input changed, and each output element holds its old value or its result;
// - the context stays usable: the same call again gives the right result.
// The failed calls never reach CUDA, so the sanitizers see no API error here.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "cuda_test_support.hpp"
#include "fault_injection.hpp"

namespace ew::test {
namespace {

namespace fault = ew::detail::cuda::fault;
using ew::detail::cuda::Step;

struct StepCase {
  Step step;
  const char* name;
  cudaError_t error;  // what the failing call returns
  Errc code;          // what the op must raise
  const char* needle; // what its message must contain
};

// cudaErrorLaunchOutOfResources: a launch error that leaves the context usable.
constexpr StepCase step_cases[] = {
    {Step::scratch_alloc, "scratch_alloc", cudaErrorMemoryAllocation, Errc::out_of_memory, "pipeline device scratch"},
    {Step::staging_alloc, "staging_alloc", cudaErrorMemoryAllocation, Errc::out_of_memory, "pipeline pinned staging"},
    {Step::host_to_device, "host_to_device", cudaErrorUnknown, Errc::device_error, "host-to-device copy"},
    {Step::device_to_host, "device_to_host", cudaErrorUnknown, Errc::device_error, "device-to-host copy"},
    {Step::kernel_launch, "kernel_launch", cudaErrorLaunchOutOfResources, Errc::device_error, "kernel launch"},
    {Step::sync, "sync", cudaErrorUnknown, Errc::device_error, "Synchronize"},
    {Step::order, "order", cudaErrorUnknown, Errc::device_error, "pipeline"},
};

struct Placement {
  const char* name;
  MemorySpace a, b, out;
};

class CudaFaults : public NeedsCuda {
 protected:
  void TearDown() override { fault::disarm(); }
};

template <class T>
bool same_bytes(const std::vector<T>& x, const std::vector<T>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(T)) == 0;
}

// One op on a fresh context with the `nth` call of `sc.step` failing (nth = 0: none
// fails, the calls are only counted). Returns how many calls of the step the op made.
template <class T>
long run_with_fault(Op op, const Placement& where, const StepCase& sc, long nth) {
  Context ctx(Backend::cuda, small_staging());
  const std::size_t n = 50'001;
  const Case<T> c = make_case<T>(op, n, offset_sets[2]);
  Storage<T> da(ctx, where.a, c.total()), db(ctx, where.b, c.total()), dout(ctx, where.out, c.total());
  da.fill(c.a), db.fill(c.b), dout.fill(c.out_init);
  auto call = [&] {
    run(ctx, op, c.operands(da.data(), db.data(), dout.data()));
    ctx.synchronize();
  };
  fault::arm(sc.step, nth, sc.error);
  if (nth == 0) {
    call();
    fault::disarm();
    EXPECT_TRUE(c.mismatch(dout.read()).empty());
    return fault::calls(sc.step);
  }
  expect_error(sc.code, call, sc.needle);
  fault::disarm();
  EXPECT_TRUE(fault::fired()) << "the armed call never came: the case tested nothing";

  EXPECT_TRUE(same_bytes(da.read(), c.a)) << "input a was written";
  if (info(op).input_streams == 2) {
    EXPECT_TRUE(same_bytes(db.read(), c.b)) << "input b was written";
  }
  const std::vector<T> got = dout.read();
  std::size_t written = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const bool old = same_bits(got[i], c.out_init[i]) && is_poison(got[i]) == is_poison(c.out_init[i]);
    const bool result = same_bits(got[i], c.want[i]) && is_poison(got[i]) == is_poison(c.want[i]);
    if (!old && !result) {
      ADD_FAILURE() << "output element " << i << " is neither its old value nor its result";
      break;
    }
    written += result && !old;
  }
  std::printf("    %s, %s call %ld failed: %zu of %zu output elements written\n", where.name, sc.name, nth, written, n);

  // The context is still usable: the same call again.
  dout.fill(c.out_init);
  call();
  const std::string m = c.mismatch(dout.read());
  EXPECT_TRUE(m.empty()) << "the call after the failure: " << m;
  EXPECT_EQ(cudaGetLastError(), cudaSuccess);
  return nth;
}

template <class T>
void every_step_fails_once(Op op, const Placement& where) {
  int steps_seen = 0;
  for (const StepCase& sc : step_cases) {
    SCOPED_TRACE(std::string(where.name) + " " + to_string(op) + " " + to_string(dtype_v<T>) + ", step " + sc.name);
    const long calls = run_with_fault<T>(op, where, sc, 0);
    if (calls == 0) continue;  // a step this placement does not take (staging for pinned operands)
    ++steps_seen;
    std::vector<long> which = {1, (calls + 1) / 2, calls};
    which.erase(std::unique(which.begin(), which.end()), which.end());
    for (long nth : which) {
      SCOPED_TRACE("call " + std::to_string(nth) + " of " + std::to_string(calls));
      run_with_fault<T>(op, where, sc, nth);
    }
  }
  // Every placement above takes at least 6 of the 7 steps (pinned operands need no
  // staging, a device output no device-to-host copy).
  EXPECT_GE(steps_seen, 6);
}

// The fault points themselves (no GPU needed): only the armed call of the armed step
// fails, and it does not run.
TEST(CudaFaultPoints, OnlyTheNthCallOfTheArmedStepFails) {
  int ran = 0;
  auto call = [&] {
    ++ran;
    return cudaSuccess;
  };
  fault::arm(Step::device_to_host, 3, cudaErrorUnknown);
  for (int i = 1; i <= 5; ++i) {
    EXPECT_EQ(ew::detail::cuda::fault_point(Step::host_to_device, call), cudaSuccess);
    EXPECT_EQ(ew::detail::cuda::fault_point(Step::device_to_host, call), i == 3 ? cudaErrorUnknown : cudaSuccess);
    EXPECT_EQ(fault::fired(), i >= 3);
  }
  EXPECT_EQ(ran, 9);
  EXPECT_EQ(fault::calls(Step::host_to_device), 5);
  EXPECT_EQ(fault::calls(Step::device_to_host), 5);
  fault::arm(Step::device_to_host, 0, cudaErrorUnknown);  // counts only
  for (int i = 0; i < 4; ++i) EXPECT_EQ(ew::detail::cuda::fault_point(Step::device_to_host, call), cudaSuccess);
  EXPECT_FALSE(fault::fired());
  EXPECT_EQ(fault::calls(Step::device_to_host), 4);
  fault::arm(Step::sync, 1, cudaErrorUnknown);
  fault::disarm();
  EXPECT_EQ(ew::detail::cuda::fault_point(Step::sync, call), cudaSuccess);
  EXPECT_FALSE(fault::fired());
}

TEST_F(CudaFaults, PinnedPipeline) {
  const Placement pinned{"pinned", MemorySpace::pinned, MemorySpace::pinned, MemorySpace::pinned};
  every_step_fails_once<float>(Op::triad, pinned);
  every_step_fails_once<double>(Op::axpby, pinned);
}

TEST_F(CudaFaults, PageablePipeline) {
  const Placement pageable{"pageable", MemorySpace::host, MemorySpace::host, MemorySpace::host};
  every_step_fails_once<float>(Op::add, pageable);
  every_step_fails_once<double>(Op::axpy, pageable);
}

TEST_F(CudaFaults, MixedPipeline) {
  every_step_fails_once<float>(Op::mul, {"pageable a, pinned b, device out", MemorySpace::host, MemorySpace::pinned,
                                         MemorySpace::device});
  every_step_fails_once<double>(Op::triad, {"device a, pinned b, pageable out", MemorySpace::device,
                                            MemorySpace::pinned, MemorySpace::host});
}

// A device-resident op whose launch fails: nothing written, the context usable.
TEST_F(CudaFaults, DeviceResidentLaunch) {
  const Placement device{"device", MemorySpace::device, MemorySpace::device, MemorySpace::device};
  const StepCase launch = step_cases[4];
  ASSERT_EQ(launch.step, Step::kernel_launch);
  EXPECT_EQ(run_with_fault<float>(Op::add, device, launch, 0), 1);
  run_with_fault<float>(Op::add, device, launch, 1);
  const StepCase sync = step_cases[5];
  ASSERT_EQ(sync.step, Step::sync);
  run_with_fault<double>(Op::scale, device, sync, 1);
}

}  // namespace
}  // namespace ew::test

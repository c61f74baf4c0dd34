// ew_cuda_sticky_child: run by CudaSticky.KernelFaultInAChildProcess (test_cuda_sticky.cpp)
// as a process of its own, because a kernel fault breaks CUDA for the whole process.
// A context does an op, then a kernel faults on its stream; every later call of the
// library, on that context or a new one, must raise ew::Error(device_fatal) at once
// rather than hang or report something else. Prints one line per call and exits 0 when
// every call behaved, 1 otherwise, 2 when cuda is unusable here.
#include <cuda_runtime.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "ew/ew.hpp"

cudaError_t launch_illegal_write(cudaStream_t stream);  // illegal_write.cu

namespace {

int failures = 0;

void expect_fatal(const char* what, const std::function<void()>& call, const char* needle = "") {
  try {
    call();
    std::printf("FAIL: %s: nothing was thrown\n", what);
    ++failures;
  } catch (const ew::Error& e) {
    const bool ok = e.code() == ew::Errc::device_fatal && std::string(e.what()).find(needle) != std::string::npos;
    std::printf("%s: %s: %s\n", ok ? "ok" : "FAIL", what, e.what());
    failures += !ok;
  }
  std::fflush(stdout);
}

}  // namespace

int main() {
  try {
    const ew::BackendStatus status = ew::backend_status(ew::Backend::cuda);
    if (!status.usable) {
      std::printf("cuda unusable here: %s\n", status.reason.c_str());
      return 2;
    }
    ew::Context ctx(ew::Backend::cuda);
    const std::size_t n = 1 << 20;
    std::vector<float> x(n, 1.5f), y(n, 0.0f);
    ew::Buffer<float> dx(ctx, n), dy(ctx, n);
    dx.upload(x.data(), n);
    ew::scale<float>(ctx, 2.0f, dx.span(), dy.span());
    ctx.synchronize();
    dy.download(y.data(), n);
    if (y[0] != 3.0f || y[n - 1] != 3.0f) {
      std::printf("FAIL: the op before the fault gave %g\n", double(y[0]));
      return 1;
    }
    std::printf("ok: an op before the fault\n");

    const cudaError_t launched = launch_illegal_write(static_cast<cudaStream_t>(ctx.native_stream()));
    std::printf("the faulting kernel was launched (%s)\n", cudaGetErrorName(launched));
    std::fflush(stdout);

    expect_fatal("synchronize after the fault", [&] { ctx.synchronize(); }, "cudaErrorIllegalAddress");
    expect_fatal("device-resident op", [&] {
      ew::scale<float>(ctx, 2.0f, dx.span(), dy.span());
      ctx.synchronize();
    });
    expect_fatal("pageable op", [&] {
      ew::scale<float>(ctx, 2.0f, ew::Span<const float>(x.data(), n), ew::Span<float>(y.data(), n));
    });
    expect_fatal("Buffer allocation", [&] { ew::Buffer<float> b(ctx, 1000); });
    expect_fatal("a new context and an op on it", [&] {
      ew::Context fresh(ew::Backend::cuda);
      ew::scale<float>(fresh, 2.0f, ew::Span<const float>(x.data(), n), ew::Span<float>(y.data(), n));
      fresh.synchronize();
    });
  } catch (const std::exception& e) {
    std::printf("FAIL: unexpected: %s\n", e.what());
    return 1;
  }
  if (failures) {
    std::printf("FAIL: %d call(s) misbehaved after the fault\n", failures);
    return 1;
  }
  std::printf("every call after the fault raised device_fatal\n");
  return 0;
}
